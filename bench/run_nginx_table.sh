#!/usr/bin/env bash
# docs/BENCHMARKS.md's lead table: every client against Debian nginx on loopback, N
# runs each, the raw-socket client as the limit. Prints one line per client
# and scenario: median ips over the runs, min..max, and the median's ratio to
# the limit (ref-raw; ref-raw-events for the stream).
#   bench/run_nginx_table.sh [RUNS] [SECONDS]      (defaults 5 runs of 3 s)
# RAW_OUT=FILE keeps the JSON lines of every run.
set -euo pipefail
runs=${1:-5} seconds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_BIN:-$here/../build/bench/http_backend}
base=$("$here/nginx/nginx.sh" start)
trap '"$here/nginx/nginx.sh" stop' EXIT
declare -A clients=(
  [small_post]="nous-pooled nous-curl ref-poco ref-curl ref-raw"
  [large_seq]="nous-pooled nous-curl ref-poco ref-curl ref-raw"
  [parallel_50]="nous-pooled ref-poco ref-curl ref-raw"
  [sse_firehose]="nous-window nous-pull ref-raw-events"
)
limit_of() { [ "$1" = sse_firehose ] && echo ref-raw-events || echo ref-raw; }
out=${RAW_OUT:-$(mktemp)}
: >"$out"
for scenario in small_post large_seq parallel_50 sse_firehose; do
  for run in $(seq 1 "$runs"); do
    for client in ${clients[$scenario]}; do
      "$bin" --url-base "$base" --scenario "$scenario" --client "$client" --seconds "$seconds" --warmup 1 >>"$out"
    done
  done
done
mawk -v runs="$runs" -f "$here/table_stats.awk" -f /dev/stdin "$out" <<'AWK'
  { c = str($0, "client"); s = str($0, "scenario"); k = s "|" c; v = (s == "sse_firehose") ? field($0, "mib_s") : field($0, "ips");
    if (!(k in order)) { order[k] = ++seen; names[seen] = k }
    n[k]++; vals[k, n[k]] = v; alloc[k] = field($0, "alloc_bytes") }
  END {
    for (i = 1; i <= seen; i++) { k = names[i]; med[k] = median(k) }
    printf "%-13s %-15s %12s %22s %10s %12s\n", "scenario", "client", "median", "min..max", "x limit", "alloc_bytes"
    for (i = 1; i <= seen; i++) { k = names[i]; split(k, p, "|");
      lim = (p[1] == "sse_firehose") ? p[1] "|ref-raw-events" : p[1] "|ref-raw";
      printf "%-13s %-15s %12.1f %10.1f..%-10.1f %9.2fx %12d\n", p[1], p[2], med[k], lo[k], hi[k], med[k] / med[lim], alloc[k] }
    print "(ips; sse_firehose in MiB/s; " runs " runs each)"
  }
AWK
[ -n "${RAW_OUT:-}" ] || rm -f "$out"
