#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for FUZZ_SECONDS from its corpus
# (tests/fuzz/corpus/<target>/, plus the golden fixtures as seeds). Fails on
# any crash, leak or UB report; prints each target's executions.
#   run.sh BUILD_DIR SECONDS
set -uo pipefail
build=$1 seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../fixtures"
status=0
# Every UB report halts, except the one RapidJSON 1.1 line in ubsan.supp.
export UBSAN_OPTIONS="suppressions=$here/ubsan.supp:halt_on_error=1:print_stacktrace=1"
declare -A seeds=(
  [fuzz_http1_response]="$fixtures/http1"
  [fuzz_sse_decoder]="$fixtures/sse"
  [fuzz_raw_decoder]="$fixtures/sse"
  [fuzz_ndjson_decoder]="$fixtures/ndjson"
  [fuzz_json_array_decoder]="$fixtures/json_array"
  [fuzz_llm_deltas]="$fixtures/llm"
  [fuzz_aws_event_stream]="$fixtures/aws_eventstream"
)
# Tokens a target's mutations should know (libFuzzer dictionaries).
declare -A dicts=(
  [fuzz_json_scan]="$here/json.dict"
  [fuzz_chunk_shape]="$here/json.dict"
  [fuzz_partial_json]="$here/json.dict"
  [fuzz_embeddings]="$here/json.dict"
  [fuzz_mock_chat]="$here/json.dict"
)
for target in fuzz_http1_response fuzz_sse_decoder fuzz_ndjson_decoder fuzz_json_array_decoder fuzz_raw_decoder \
              fuzz_url fuzz_retry_hint fuzz_config fuzz_llm_deltas fuzz_rate_limit fuzz_json_scan \
              fuzz_chunk_shape fuzz_partial_json fuzz_embeddings fuzz_mock_chat fuzz_aws_event_stream fuzz_utf8_check; do
  work=$(mktemp -d)
  log=$(mktemp)
  # New inputs go to a scratch corpus: the checked-in one changes only by hand.
  # Only folders that exist (git keeps no empty folder).
  dirs=()
  for d in "$here/corpus/$target" ${seeds[$target]:-}; do [ -d "$d" ] && dirs+=("$d"); done
  extra=()
  [ -n "${dicts[$target]:-}" ] && extra+=(-dict="${dicts[$target]}")
  ./"$build/tests/fuzz/$target" "${extra[@]}" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/fuzz-$target-" "$work" "${dirs[@]}" >"$log" 2>&1
  code=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  printf '%-26s %12s executions  exit %d\n' "$target" "${execs:-?}" "$code"
  if [ "$code" -ne 0 ]; then
    status=1
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written|No such file' "$log" | head -20
  fi
  rm -rf "$work" "$log"
done
exit "$status"
