#!/usr/bin/env bash
# The providers' official SDKs (npm openai with AzureOpenAI, @anthropic-ai/sdk,
# @anthropic-ai/vertex-sdk, @google/genai, @aws-sdk/client-bedrock-runtime,
# pinned in package-lock.json) read `nouscli mock-server`: tests/sdk/check.mjs.
#   run.sh NOUSCLI WORKDIR
# Needs node and npm (make deps) and the npm registry; fails, saying which,
# when either is missing: an SDK check that cannot run has not passed.
set -uo pipefail
nouscli=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "sdk-test: $tool is not installed (make deps installs it)"; exit 1; }
done
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/check.mjs" "$work/"
if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "sdk-test: npm could not install the SDKs (is the npm registry reachable?): failing, not skipping"
  exit 1
fi
source "$here/../support/mock_server.sh"
trap stop_mock EXIT
start_mock "$nouscli" --tokens 8 --aws-secret mock-secret || { echo "sdk-test: no mock server"; exit 1; }
base=$MOCK_URL
echo "sdk-test: node $(node --version), against $base"
(cd "$work" && node check.mjs "$base") || exit 1
# Part two: every request body nouscli builds against the SDKs' request types.
bash "$here/types/check.sh" "$nouscli" "$work/types" || exit 1
# Part three: what the OTLP exporter sends, against opentelemetry-proto and the JS SDK.
bash "$here/otlp/check.sh" "$nouscli" "$work/otlp"
