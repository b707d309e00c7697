#!/usr/bin/env bash
# bench/chat_load side by side: run_chat (window, pull), the raw floors and
# the official OpenAI Node SDK, against one `nouscli mock-server` pacing each
# stream, pinned (client on CPU 0, server on CPU 1: CPU per token without
# wake-up latency across idle cores) and unpinned. Prints a table. raw-watch
# is the window backend's read relay alone (chat_load.cpp): its floor;
# nous-stream-pull is the HTTP layer alone (no llm layer), pull backend.
#   bench/run_chat_load.sh [STREAMS] [TOKENS_PER_STREAM] [TOKENS_PER_SECOND]
#   ROUNDS=N (default 3): each placement runs every client N times, in
#   turn (client after client, round after round), and the table gives each
#   client's median with its lowest and highest run. On a shared virtual
#   machine one run of the same client varies by 10-20% from minute to
#   minute; the rounds in turn put that drift on every client alike.
# Needs a build (make build) and, for the Node row, `make sdk-test` once
# (it installs the pinned npm `openai` into build/sdk).
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${1:-200} tokens=${2:-200} rate=${3:-50}
rounds=${ROUNDS:-3}
build=${BUILD:-build}
source tests/support/mock_server.sh
trap stop_mock EXIT
start_mock "$build/tools/nouscli" --tokens "$tokens" --tokens-per-second "$rate"
taskset -pc 1 "$MOCK_PID" >/dev/null  # the server on CPU 1
base=$MOCK_URL
echo "# $streams streams x $tokens tokens at $rate tokens/s each, server pinned to CPU 1 ($base)"
echo "# $rounds rounds in turn per placement: median (lowest-highest) of the runs"
run() {  # pinning, then the command
  local pin=$1; shift
  if [ "$pin" = pinned ]; then taskset -c 0 "$@"; else "$@"; fi
}
node_row=false
if [ -d "$build/sdk/node_modules/openai" ]; then
  cp bench/chat_load_node.mjs "$build/sdk/"
  node_row=true
fi
results=$(mktemp)
trap 'stop_mock; rm -f "$results"' EXIT
for pin in pinned unpinned; do
  for ((round = 0; round < rounds; round++)); do
    for client in raw-epoll raw-thread raw-watch stream-pull pull window; do
      case $client in
        raw-*) args=(--client "$client") ;;
        stream-pull) args=(--client nous-stream --stream-backend pull) ;;
        *) args=(--stream-backend "$client") ;;
      esac
      echo "$pin $(run $pin "$build/bench/chat_load" --url-base "$base" --streams "$streams" "${args[@]}")" >>"$results"
    done
    if $node_row; then
      echo "$pin $(cd "$build/sdk" && run $pin node chat_load_node.mjs "$base" "$streams")" >>"$results"
    fi
  done
done
python3 - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    pin, row = line.split(" ", 1)
    r = json.loads(row)
    key = (pin, r["client"])
    if key not in runs:
        order.append(key)
    runs[key].append(r)
print("| %-9s | %-18s | %8s | %7s | %-22s | %-20s | %10s |" % (
    "placement", "client", "tokens", "cpu_s", "us/token", "x raw-thread", "peak RSS"))
print("|---|---|---|---|---|---|---|")
for key in order:
    rs = runs[key]
    us = [r["us_per_token"] for r in rs]
    errors = sum(r["errors"] for r in rs)
    cell = "%.2f (%.2f-%.2f)" % (statistics.median(us), min(us), max(us))
    # Each run against the raw thread's run of the same round (minutes
    # apart at most): the machine's drift mostly cancels in the ratio.
    floor = runs.get((key[0], "raw-thread"), [])
    ratios = [r["us_per_token"] / f["us_per_token"] for r, f in zip(rs, floor) if f["us_per_token"]]
    ratio = "%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios)) if ratios else ""
    print("| %-9s | %-18s | %8d | %7.3f | %-22s | %-20s | %7.1f MB |%s" % (
        key[0], key[1], statistics.median(r["tokens"] for r in rs),
        statistics.median(r["cpu_s"] for r in rs), cell, ratio,
        statistics.median(r["peak_rss_kb"] for r in rs) / 1024,
        " %d errors" % errors if errors else ""))
PY
