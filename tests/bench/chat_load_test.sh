#!/usr/bin/env bash
# bench/chat_load keeps DESIGN's driver contract: every client prints one JSON
# line with exactly the contract's keys, in order, and counts every text
# token of a short unpaced load against its in-process mock (3 streams x 25
# tokens), with no error.
#   tests/bench/chat_load_test.sh CHAT_LOAD
set -euo pipefail
chat_load=$1
number='[0-9]+(\.[0-9]+)?'
failed=0
for client in raw-thread raw-epoll raw-watch window pull; do
  case $client in
    raw-*) args=(--client "$client") name=$client ;;
    *) args=(--stream-backend "$client") name=nous-llm-$client ;;
  esac
  line=$("$chat_load" --streams 3 --mock-tokens 25 --mock-tokens-per-second 0 "${args[@]}") || true
  contract="^\{\"client\":\"$name\",\"streams\":3,\"tokens\":75,\"errors\":0,\"wall_s\":$number,\"cpu_s\":$number,\"us_per_token\":$number,\"peak_rss_kb\":[1-9][0-9]*\}$"
  if [[ $line =~ $contract ]]; then
    echo "ok   $client: $line"
  else
    echo "FAILED: $client: $line"
    failed=1
  fi
done
exit $failed
