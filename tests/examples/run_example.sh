#!/usr/bin/env bash
# Runs a docs/examples program against the built-in mock server:
#   run_example.sh NOUSCLI EXAMPLE EXPECTED_TEXT [ARG...]
# Passes when the example exits 0 and prints EXPECTED_TEXT. Each ARG is
# passed to the example with "{base}" replaced by the mock's URL.
set -uo pipefail
nouscli=$1 example=$2 expected=$3
shift 3
source "$(dirname "$0")/../support/mock_server.sh"
out=$(mktemp)
trap 'stop_mock; rm -f "$out"' EXIT
start_mock "$nouscli" --tokens 8 || exit 1
base=$MOCK_URL
unset OPENAI_API_KEY
args=()
for arg in "$@"; do args+=("${arg//\{base\}/$base}"); done
# The mock is the OTLP collector too (docs/examples/otlp_export.cpp).
OPENAI_BASE_URL="$base/v1" OTEL_EXPORTER_OTLP_ENDPOINT="$base" "$example" "${args[@]}" >"$out"
code=$?
echo "--- $(basename "$example") printed:"
cat "$out"
[ "$code" -eq 0 ] || { echo "exit $code"; exit 1; }
grep -qF -- "$expected" "$out" || { echo "expected to see: $expected"; exit 1; }
echo "ok"
