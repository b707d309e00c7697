#!/usr/bin/env bash
# Runs bench/http_backend RUNS times and prints, per scenario and client, the
# iterations/s of every run, their median, and the median ratio of
# nous-pooled to each reference row (run-to-run spread shown as min..max).
# usage: [RAW_DIR=dir] bench/repeat_http_backend.sh [RUNS] [http_backend flags...]
# Each run's full table is kept in $RAW_DIR (default /tmp) as http_backend-run-N.txt.
set -euo pipefail
runs=${1:-5}
shift || true
bin=${BIN:-build/bench/http_backend}
if [ "${SUMMARIZE_ONLY:-}" != "" ]; then out=/dev/null; else out=$(mktemp); fi
[ "${SUMMARIZE_ONLY:-}" != "" ] && runs=0
for i in $(seq 1 "$runs"); do
  "$bin" "$@" | tee "${RAW_DIR:-/tmp}/http_backend-run-$i.txt" | awk -v run="$i" '!/^#/ && $1 != "client" && NF >= 10 { print run, $1, $2, $3, $6 }' >>"$out"
done
summarize() {
  # mawk has no asort(): a small insertion sort.
  awk '
    function isort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
    { key = $3 " " $2; ips[key] = ips[key] " " $4; scen[$3] = 1; run_ips[$1 " " $3 " " $2] = $4 }
    END {
      printf "%-13s %-13s %-48s %10s\n", "scenario", "client", "iterations/s per run", "median"
      for (k in ips) {
        split(k, p, " "); m = split(ips[k], v, " "); isort(v, m)
        printf "%-13s %-13s %-48s %10.1f\n", p[1], p[2], ips[k], v[int((m + 1) / 2)]
      }
      printf "\n%-13s %-13s %8s %8s %8s   (nous-pooled ips / reference ips, run by run)\n", "ratio", "reference", "min", "median", "max"
      for (s in scen) for (r = 0; r < 2; r++) {
        ref = r == 0 ? "ref-poco" : "ref-curl"; c = 0; split("", q)
        for (k in run_ips) { split(k, p, " "); if (p[2] == s && p[3] == "nous-pooled") {
          other = p[1] " " s " " ref; if (other in run_ips) q[++c] = run_ips[k] / run_ips[other] } }
        if (c == 0) continue
        isort(q, c); printf "%-13s %-13s %8.2f %8.2f %8.2f\n", s, ref, q[1], q[int((c + 1) / 2)], q[c]
      }
    }' "$1"
}
if [ "${SUMMARIZE_ONLY:-}" != "" ]; then summarize "$SUMMARIZE_ONLY"; exit 0; fi
summarize "$out"
rm -f "$out"
