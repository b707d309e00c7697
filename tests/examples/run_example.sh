#!/usr/bin/env bash
# Runs a docs/examples program against the built-in mock server:
#   run_example.sh NOUSCLI EXAMPLE EXPECTED_TEXT [ARG...]
# Passes when the example exits 0 and prints EXPECTED_TEXT. Each ARG is
# passed to the example with "{base}" replaced by the mock's URL.
set -uo pipefail
nouscli=$1 example=$2 expected=$3
shift 3
log=$(mktemp)
out=$(mktemp)
"$nouscli" mock-server --port 0 --tokens 8 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$log" "$out"' EXIT
base=""
for _ in $(seq 1 200); do
  base=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
  [ -n "$base" ] && break
  sleep 0.05
done
[ -n "$base" ] || { echo "mock server did not start"; cat "$log"; exit 1; }
unset OPENAI_API_KEY
args=()
for arg in "$@"; do args+=("${arg//\{base\}/$base}"); done
OPENAI_BASE_URL="$base/v1" "$example" "${args[@]}" >"$out"
code=$?
echo "--- $(basename "$example") printed:"
cat "$out"
[ "$code" -eq 0 ] || { echo "exit $code"; exit 1; }
grep -qF -- "$expected" "$out" || { echo "expected to see: $expected"; exit 1; }
echo "ok"
