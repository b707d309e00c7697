#!/usr/bin/env bash
# make sdk-test, part three: what `nouscli chat|embed --otlp` exports (a
# streamed call, a whole call with its content captured, a failed call, an
# embeddings call, a routed call that fails over) is received by the mock and
# held to the opentelemetry-proto definitions and the OpenTelemetry JS SDK's
# serializer (check_otlp.mjs; npm packages pinned in package-lock.json).
#   check.sh NOUSCLI WORKDIR
set -uo pipefail
nouscli=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/check_otlp.mjs" "$work/"
cp -r "$here/proto" "$work/"
if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "sdk-test: npm could not install protobufjs and the OpenTelemetry transformer (is the npm registry reachable?): failing, not skipping"
  exit 1
fi
source "$here/../../support/mock_server.sh"
deployments=$(mktemp)
trap 'stop_mock; rm -f "$deployments"' EXIT
start_mock "$nouscli" --tokens 4 || { echo "sdk-test: no mock server"; exit 1; }
export OPENAI_API_KEY=sk-otlp OTEL_EXPORTER_OTLP_ENDPOINT=$MOCK_URL OTEL_SERVICE_NAME=sdk-test \
  OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci,service.version=1.0"
chat=("$nouscli" chat hello --model mock-1 --base-url "$MOCK_URL/v1" --otlp)
"${chat[@]}" >/dev/null || { echo "sdk-test: a streamed chat --otlp failed"; exit 1; }
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true "${chat[@]}" --no-stream --system "be brief" >/dev/null \
  || { echo "sdk-test: a whole chat --otlp failed"; exit 1; }
"${chat[@]}" -H "x-mock-fault: server_error" --retry 0 >/dev/null 2>&1
[ $? -eq 5 ] || { echo "sdk-test: the failing chat did not fail as a provider error"; exit 1; }
"$nouscli" embed one two --model embed-1 --base-url "$MOCK_URL/v1" --otlp >/dev/null \
  || { echo "sdk-test: embed --otlp failed"; exit 1; }
# A router whose first deployment refuses connections: a parent span, two attempts.
cat >"$deployments" <<JSON
{"strategy":"weighted","deployments":[
 {"name":"gone","provider":"openai","base_url":"http://127.0.0.1:1/v1","model":"mock-a","weight":1},
 {"name":"mock","provider":"openai","base_url":"$MOCK_URL/v1","model":"mock-b","weight":0}]}
JSON
"$nouscli" chat hello --deployments "$deployments" --otlp >/dev/null \
  || { echo "sdk-test: a routed chat --otlp failed"; exit 1; }
# 4 calls of one span each, and the routed call's parent and two attempts.
(cd "$work" && node check_otlp.mjs "$MOCK_URL" 7)
