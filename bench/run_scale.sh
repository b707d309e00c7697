#!/usr/bin/env bash
# bench/chat_load at many concurrent streams (docs/BENCHMARKS.md, "Scale"):
# the raw thread floor, the relay's floor (raw-watch: the window's threads
# and system calls with nothing of the library), pull, the window with its
# read relay and the window reader-only (NOUS_HTTP_WINDOW_RELAY=off), each
# against a fresh `nouscli mock-server` pinned to CPU 1 (a mock reused over
# many large runs ended with errors), the client pinned to CPU 0, clients in
# turn round after round. Prints a table: µs of CPU a token (median, lowest-highest), each
# run's ratio to the raw thread's run of the same round, peak RSS a stream,
# and the time to first token (p50 / p99, chat_load's stderr). Each run's
# line goes to stderr as it ends.
#   bench/run_scale.sh [TOKENS_PER_STREAM] [TOKENS_PER_SECOND] STREAMS...
#   ROUNDS=N (default 3); CLIENTS="raw-thread pull ..." runs some of them
#   (the ratios need raw-thread); a client named NAME+hugetlb is NAME with
#   malloc's arenas on reserved huge pages (GLIBC_TUNABLES=
#   glibc.malloc.hugetlb=2; reserve them first, e.g. sysctl
#   vm.nr_hugepages=300). Needs a build (make build). Raises the soft
#   descriptor limit to 20,000 (the hard limit must allow it) and both
#   library caps to 12,000 through NOUS_HTTP_CONFIG.
set -euo pipefail
cd "$(dirname "$0")/.."
tokens=${1:-40} rate=${2:-2}
shift 2 || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(200 1000 4000 10000)
rounds=${ROUNDS:-3}
build=${BUILD:-build}
ulimit -n 20000
config=$(mktemp)
results=$(mktemp)
errors=$(mktemp)
echo '{"max_concurrent_streams":12000,"pool_max_per_origin":12000}' >"$config"
export NOUS_HTTP_CONFIG=$config
source tests/support/mock_server.sh
trap 'stop_mock; rm -f "$config" "$results" "$errors"' EXIT
echo "# N streams x $tokens tokens at $rate tokens/s each; $rounds rounds in turn"
for streams in "${counts[@]}"; do
  for ((round = 0; round < rounds; round++)); do
    for client in ${CLIENTS:-raw-thread raw-watch pull window reader-only}; do
      tunables=()
      [[ $client == *+hugetlb ]] && tunables=(GLIBC_TUNABLES=glibc.malloc.hugetlb=2)
      case ${client%+hugetlb} in
        raw-thread | raw-watch) cmd=("$build/bench/chat_load" --client "${client%+hugetlb}") ;;
        reader-only) cmd=("$build/bench/chat_load" --stream-backend window)
          tunables+=(NOUS_HTTP_WINDOW_RELAY=off) ;;
        *) cmd=("$build/bench/chat_load" --stream-backend "${client%+hugetlb}") ;;
      esac
      cmd=(env "${tunables[@]}" "${cmd[@]}")
      start_mock "$build/tools/nouscli" --tokens "$tokens" --tokens-per-second "$rate" \
        --max-connections 20000
      taskset -pc 1 "$MOCK_PID" >/dev/null
      # A run that fails is shown as one, not the end of the table.
      row=$(taskset -c 0 "${cmd[@]}" --url-base "$MOCK_URL" --streams "$streams" 2>"$errors") ||
        row="{\"us_per_token\":0,\"tokens\":0,\"errors\":$streams,\"peak_rss_kb\":0}"
      stop_mock
      ttft=$(grep -o 'p50 [0-9.]* ms, p99 [0-9.]* ms' "$errors" || echo "-")
      echo "$streams $client $round|$ttft|$row" | tee -a "$results" >&2  # progress on stderr
    done
  done
done
python3 - "$results" "$tokens" <<'PY'
import collections, json, statistics, sys
per_stream = int(sys.argv[2])
runs = collections.defaultdict(list)
ttfts = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    key, ttft, row = line.rstrip("\n").split("|", 2)
    streams, client, _ = key.split()
    k = (int(streams), client)
    if k not in runs:
        order.append(k)
    runs[k].append(json.loads(row))
    ttfts[k].append(ttft)
# A run short of its tokens (a stream the server cut, without an error the
# raw floor would see) is counted, and its figures are suspect.
print("| streams | client | us/token | x raw thread | peak RSS a stream | TTFT (each run) | errors | runs short |")
print("|---|---|---|---|---|---|---|---|")
for k in order:
    rs = runs[k]
    us = [r["us_per_token"] for r in rs]
    floor = runs.get((k[0], "raw-thread"), [])
    ratios = [r["us_per_token"] / f["us_per_token"] for r, f in zip(rs, floor)]
    short = sum(r["tokens"] < k[0] * per_stream for r in rs)
    print("| %d | %s | %.1f (%.1f-%.1f) | %.2f (%.2f-%.2f) | %.0f KB | %s | %d | %d |" % (
        k[0], k[1], statistics.median(us), min(us), max(us),
        statistics.median(ratios), min(ratios), max(ratios),
        statistics.median(r["peak_rss_kb"] for r in rs) / k[0],
        "; ".join(ttfts[k]), sum(r["errors"] for r in rs), short))
PY
