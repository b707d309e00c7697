#!/usr/bin/env bash
# bench/chat_load side by side: run_chat (window, pull), the raw floors and
# the official OpenAI Node SDK, against one `nouscli mock-server` pacing each
# stream, pinned (client on CPU 0, server on CPU 1: CPU per token without
# wake-up latency across idle cores) and unpinned. Prints a table.
#   bench/run_chat_load.sh [STREAMS] [TOKENS_PER_STREAM] [TOKENS_PER_SECOND]
# Needs a build (make build) and, for the Node row, `make sdk-test` once
# (it installs the pinned npm `openai` into build/sdk).
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${1:-200} tokens=${2:-200} rate=${3:-50}
build=${BUILD:-build}
source tests/support/mock_server.sh
trap stop_mock EXIT
start_mock "$build/tools/nouscli" --tokens "$tokens" --tokens-per-second "$rate"
taskset -pc 1 "$MOCK_PID" >/dev/null  # the server on CPU 1
base=$MOCK_URL
echo "# $streams streams x $tokens tokens at $rate tokens/s each, server pinned to CPU 1 ($base)"
run() {  # pinning, then the command
  local pin=$1; shift
  if [ "$pin" = pinned ]; then taskset -c 0 "$@"; else "$@"; fi
}
printf '| %-9s | %-16s | %8s | %7s | %12s | %10s |\n' placement client tokens cpu_s "us/token" "peak RSS"
printf '|---|---|---|---|---|---|\n'
for pin in pinned unpinned; do
  rows=()
  rows+=("$(run $pin "$build/bench/chat_load" --url-base "$base" --streams "$streams" --client raw-epoll)")
  rows+=("$(run $pin "$build/bench/chat_load" --url-base "$base" --streams "$streams" --client raw-thread)")
  rows+=("$(run $pin "$build/bench/chat_load" --url-base "$base" --streams "$streams" --stream-backend pull)")
  rows+=("$(run $pin "$build/bench/chat_load" --url-base "$base" --streams "$streams" --stream-backend window)")
  if [ -d "$build/sdk/node_modules/openai" ]; then
    cp bench/chat_load_node.mjs "$build/sdk/"
    rows+=("$(cd "$build/sdk" && run $pin node chat_load_node.mjs "$base" "$streams")")
  fi
  for row in "${rows[@]}"; do
    python3 -c '
import json, sys
r = json.loads(sys.argv[2])
print("| %-9s | %-16s | %8d | %7.3f | %12.2f | %7.1f MB |" % (sys.argv[1], r["client"], r["tokens"], r["cpu_s"], r["us_per_token"], r["peak_rss_kb"] / 1024))
' "$pin" "$row"
  done
done
