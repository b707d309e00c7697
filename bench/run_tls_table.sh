#!/usr/bin/env bash
# The TLS table: every client against Debian nginx over https on loopback
# (bench/nginx/nginx.sh: TLS 1.2 and 1.3, a test CA, session tickets on),
# small_post in three modes, runs interleaved client by client:
#   keep-alive   one connection for the whole run
#   resumed      a new TCP + TLS connection per request, the last session offered
#   full         a new connection per request, no session offered (full handshake)
# Prints per mode and client: median requests/s over the runs, min..max, the
# median's time per request, and its ratio to raw OpenSSL (ref-openssl, the
# limit): requests/s for keep-alive, time per request for the cold modes.
#   bench/run_tls_table.sh [RUNS] [SECONDS]      (defaults 5 runs of 2 s)
# RAW_OUT=FILE keeps the JSON lines of every run. PIN=1 runs the client and
# nginx's worker on CPU 0 together: each request then costs the sum of both
# sides' CPU time, with no wake-up latency of an idle core in it (on a VM that
# latency can dominate a loopback round trip and hide the client's own cost).
set -euo pipefail
runs=${1:-5} seconds=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_BIN:-$here/../build/bench/http_backend}
"$here/nginx/nginx.sh" start >/dev/null
trap '"$here/nginx/nginx.sh" stop' EXIT
pin=()
if [ "${PIN:-0}" = 1 ]; then
  for pid in $(pgrep -f "nginx: worker"); do taskset -pc 0 "$pid" >/dev/null; done
  pin=(taskset -c 0)
fi
base=https://localhost:18081
ca=${NGINX_BENCH_DIR:-/tmp/nous-bench-nginx}/tls/ca.pem
clients="nous-pooled ref-openssl ref-beast ref-poco ref-curl"
"${pin[@]}" "$bin" --client nous-curl --scenario small_post --seconds 0.1 --warmup 0 --url-base "$base" --cacert "$ca" \
  >/dev/null 2>&1 && clients="$clients nous-curl"
out=${RAW_OUT:-$(mktemp)}
: >"$out"
for mode in keep-alive resumed full; do
  case $mode in
    keep-alive) flags=() ;;
    resumed) flags=(--new-connection) ;;
    full) flags=(--no-resume) ;;
  esac
  for run in $(seq 1 "$runs"); do
    for client in $clients; do
      # The curl backend shares TLS sessions between its handles and has no
      # switch to forget them: it has no full-handshake row.
      [ "$mode" = full ] && [ "$client" = nous-curl ] && continue
      line=$("${pin[@]}" "$bin" --url-base "$base" --cacert "$ca" --scenario small_post --client "$client" \
        --seconds "$seconds" --warmup 0.5 "${flags[@]}" 2>/dev/null)
      echo "$mode $line" >>"$out"
    done
  done
done
mawk -v runs="$runs" -f "$here/table_stats.awk" -f /dev/stdin "$out" <<'AWK'
  { k = $1 "|" str($0, "client"); if (!(k in order)) { order[k] = ++seen; names[seen] = k }
    n[k]++; vals[k, n[k]] = field($0, "ips") }
  END {
    for (i = 1; i <= seen; i++) { k = names[i]; med[k] = median(k) }
    printf "%-11s %-12s %10s %20s %10s %12s\n", "mode", "client", "req/s", "min..max", "ms/req", "x ref-openssl"
    for (i = 1; i <= seen; i++) { k = names[i]; split(k, p, "|"); lim = p[1] "|ref-openssl";
      ratio = (p[1] == "keep-alive") ? med[k] / med[lim] : med[lim] / med[k];
      printf "%-11s %-12s %10.1f %9.1f..%-10.1f %9.3f %11.2fx\n", p[1], p[2], med[k], lo[k], hi[k], 1000 / med[k], ratio }
    print "(" runs " runs each; x ref-openssl: requests/s ratio for keep-alive, time-per-request ratio for the cold modes)"
  }
AWK
[ -n "${RAW_OUT:-}" ] || rm -f "$out"
