#!/usr/bin/env bash
# make demo: start the built-in mock LLM server on loopback, post a chat
# completion to it with nouscli (plain and streamed), then nouscli chat in the
# three provider formats, tokens printed live; stop the server.
set -euo pipefail
nouscli=${1:-build/tools/nouscli}
log=$(mktemp)
"$nouscli" mock-server --port 0 --tokens-per-second 25 --first-token-ms 200 --aws-secret demo-secret >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  grep -q 'listening on' "$log" && break
  sleep 0.05
done
base=$(grep -o 'http://[0-9.:]*' "$log")
echo "mock server: $base"
echo "\$ nouscli post $base/v1/chat/completions -d '{\"model\":\"mock-1\",\"messages\":[...]}'"
"$nouscli" post "$base/v1/chat/completions" \
  -H 'Authorization: Bearer sk-demo' \
  -d '{"model":"mock-1","messages":[{"role":"user","content":"Say hello"}]}'
echo
echo
echo "\$ nouscli post $base/v1/chat/completions --stream -d '{\"model\":\"mock-1\",\"stream\":true,...}'"
echo "(each line is one SSE event, printed as it arrives: 25 tokens/s after 200 ms)"
"$nouscli" post "$base/v1/chat/completions" --stream \
  -H 'Authorization: Bearer sk-demo' \
  -d '{"model":"mock-1","stream":true,"messages":[{"role":"user","content":"Say hello"}]}'
echo
echo
echo "# nouscli chat: the provider helpers, tokens printed live, in the four formats the mock speaks"
export OPENAI_API_KEY=sk-demo ANTHROPIC_API_KEY=sk-demo GEMINI_API_KEY=demo
for provider in openai openai-responses anthropic gemini; do
  prefix=/v1
  [ "$provider" = gemini ] && prefix=/v1beta
  echo "\$ nouscli chat 'Say hello' --provider $provider --base-url $base$prefix --model mock-1"
  "$nouscli" chat 'Say hello' --provider "$provider" --base-url "$base$prefix" --model mock-1
done
echo "\$ nouscli chat 'Say hello' --provider anthropic --base-url $base/v1 --model mock-1 --no-stream --json"
"$nouscli" chat 'Say hello' --provider anthropic --base-url "$base/v1" --model mock-1 --no-stream --json
echo
echo "# reasoning (to stderr as it arrives) and a fault the mock plays on request"
echo "\$ nouscli chat 'Say hello' --provider anthropic --base-url $base/v1 --model mock-1 --reasoning low --show-reasoning"
"$nouscli" chat 'Say hello' --provider anthropic --base-url "$base/v1" --model mock-1 --reasoning low --show-reasoning
echo "\$ nouscli chat 'Say hello' --base-url $base/v1 --model mock-1 -H 'x-mock-fault: midstream_error'"
"$nouscli" chat 'Say hello' --base-url "$base/v1" --model mock-1 -H 'x-mock-fault: midstream_error' ||
  echo "(exit $?: the error arrived inside the stream, after the text)"
echo
echo "# structured output: a JSON Schema, the answer's value after each delta, and a strict-mode check"
schema=$(mktemp)
trap 'kill "$server" 2>/dev/null || true; rm -f "$log" "$schema"' EXIT
printf '%s' '{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"],"additionalProperties":false}' >"$schema"
echo "\$ nouscli chat 'Plan a trip' --base-url $base/v1 --model mock-1 --schema $schema --partial"
"$nouscli" chat 'Plan a trip' --base-url "$base/v1" --model mock-1 --schema "$schema" --partial
echo "\$ nouscli chat 'Plan a trip' --provider gemini --base-url $base/v1beta --model mock-1 --schema $schema --json"
"$nouscli" chat 'Plan a trip' --provider gemini --base-url "$base/v1beta" --model mock-1 --schema "$schema" --json
printf '%s' '{"type":"object","properties":{"city":{"type":"string"}}}' >"$schema"
echo "\$ nouscli chat 'Plan a trip' --base-url $base/v1 --model mock-1 --schema (no additionalProperties)"
"$nouscli" chat 'Plan a trip' --base-url "$base/v1" --model mock-1 --schema "$schema" ||
  echo "(exit $?: refused before any connection, naming the node and the rule)"
echo
echo "# embeddings: one call, rows by input, base64 on the wire (8 dimensions shown, -v names each request)"
echo "\$ nouscli embed 'first text' 'second text' --base-url $base/v1 --model text-embedding-3-small --dimensions 8 -v"
"$nouscli" embed 'first text' 'second text' --base-url "$base/v1" --model text-embedding-3-small --dimensions 8 -v
echo
echo "# what a call costs: the provider's own token count first, then the call priced by a table"
echo "\$ nouscli count-tokens 'Summarise our Q3 report' --provider anthropic --base-url $base/v1 --model claude-sonnet-4-5"
"$nouscli" count-tokens 'Summarise our Q3 report' --provider anthropic --base-url "$base/v1" --model claude-sonnet-4-5
printf '%s' '{"models":{"claude-sonnet-4*":{"input":3,"output":15,"cached_input":0.3,"cache_write":3.75}}}' >"$schema"
echo "\$ nouscli chat 'Summarise our Q3 report' --provider anthropic ... --cache auto --prices PRICES --json"
"$nouscli" chat 'Summarise our Q3 report' --provider anthropic --base-url "$base/v1" \
  --model claude-sonnet-4-5 --cache auto --prices "$schema" --json
echo "(the same call again: its prompt read from the cache, and cheaper)"
"$nouscli" chat 'Summarise our Q3 report' --provider anthropic --base-url "$base/v1" \
  --model claude-sonnet-4-5 --cache auto --prices "$schema" --json
echo
echo "# the clouds: Bedrock's Converse signed with SigV4 (the mock recomputes the signature)"
echo "\$ AWS_ACCESS_KEY_ID=AKIDDEMO AWS_SECRET_ACCESS_KEY=demo-secret nouscli chat 'Hello' --provider bedrock --region us-east-1 --base-url $base --model anthropic.claude-3-5-sonnet-20240620-v1:0"
AWS_ACCESS_KEY_ID=AKIDDEMO AWS_SECRET_ACCESS_KEY=demo-secret "$nouscli" chat 'Hello' --provider bedrock \
  --region us-east-1 --base-url "$base" --model anthropic.claude-3-5-sonnet-20240620-v1:0
echo
echo "\$ (a wrong secret) nouscli chat 'Hello' --provider bedrock ..."
AWS_ACCESS_KEY_ID=AKIDDEMO AWS_SECRET_ACCESS_KEY=wrong "$nouscli" chat 'Hello' --provider bedrock \
  --region us-east-1 --base-url "$base" --model anthropic.claude-3-5-sonnet-20240620-v1:0 ||
  echo "(exit $?: AWS's own refusal, and the secret nowhere)"
echo
echo "# Vertex AI: a Gemini model at a project's location, with an OAuth2 access token"
echo "\$ GOOGLE_OAUTH_ACCESS_TOKEN=... nouscli chat 'Hello' --provider vertex --project demo --location us-central1 --base-url $base/v1 --model gemini-2.5-flash"
GOOGLE_OAUTH_ACCESS_TOKEN=ya29.demo "$nouscli" chat 'Hello' --provider vertex --project demo \
  --location us-central1 --base-url "$base/v1" --model gemini-2.5-flash
echo
echo "# telemetry to an OpenTelemetry collector: OTLP/HTTP JSON (here the mock receives it)"
echo "\$ OTEL_EXPORTER_OTLP_ENDPOINT=$base OTEL_SERVICE_NAME=demo nouscli chat 'Hello' --base-url $base/v1 --model mock-1 --otlp"
OTEL_EXPORTER_OTLP_ENDPOINT="$base" OTEL_SERVICE_NAME=demo "$nouscli" chat 'Hello' \
  --base-url "$base/v1" --model mock-1 --otlp
echo "(the span the collector received, from GET $base/otlp)"
python3 - "$base/otlp" <<'PY'
import json, sys, urllib.request
received = json.load(urllib.request.urlopen(sys.argv[1]))
span = received["traces"][-1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
def value(v):
    inner = next(iter(v.values()))
    return [value(x) for x in inner["values"]] if "arrayValue" in v else inner
print(json.dumps({"name": span["name"], "kind": span["kind"], "traceId": span["traceId"],
                  "attributes": {a["key"]: value(a["value"]) for a in span["attributes"]}}, indent=1))
PY
