#!/usr/bin/env bash
# make sdk-test, part two: the request bodies nouscli builds (requests.sh: every
# ChatRequest field and EmbedRequest option on every format) recorded by the
# mock and type-checked against the official SDKs' request types
# (typecheck.mjs), pinned in package-lock.json.
#   check.sh NOUSCLI WORKDIR
set -uo pipefail
nouscli=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/typecheck.mjs" "$here/converse_schema.mjs" "$work/"
if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "sdk-test: npm could not install the SDKs' types (is the npm registry reachable?): failing, not skipping"
  exit 1
fi
recorded=$(mktemp -d)
source "$here/../../support/mock_server.sh"
trap 'stop_mock; rm -rf "$recorded"' EXIT
start_mock "$nouscli" --tokens 4 --record "$recorded" --aws-secret types-secret || { echo "sdk-test: no mock server"; exit 1; }
"$here/requests.sh" "$nouscli" "$MOCK_URL" || exit 1
(cd "$work" && node typecheck.mjs "$recorded") || exit 1
# Bedrock has no npm request types: its bodies are held to the AWS SDK's request schema.
(cd "$work" && node converse_schema.mjs "$recorded")
