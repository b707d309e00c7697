# Helpers of the bench table scripts (run_nginx_table.sh, run_tls_table.sh):
# a numeric or string field of an http_backend JSON line, and the median of a
# key's values (also setting lo[key] and hi[key]).
function field(line, key,   m) {
  if (match(line, "\"" key "\":[0-9.]+")) { m = substr(line, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 }
  return -1
}
function str(line, key,   m) {
  match(line, "\"" key "\":\"[^\"]*\""); m = substr(line, RSTART, RLENGTH); sub(/.*:"/, "", m); sub(/"$/, "", m)
  return m
}
# vals[key, 1..n[key]] hold the values.
function median(k,   i, j, t, a, m) {
  m = n[k]
  for (i = 1; i <= m; i++) a[i] = vals[k, i]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  lo[k] = a[1]; hi[k] = a[m]
  return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
