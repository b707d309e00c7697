#!/usr/bin/env bash
# The request matrix of `make sdk-test`'s type check: nouscli builds a body
# for every ChatRequest field and EmbedRequest option, on every format, and
# sends it to a mock started with --record (check.sh), which writes each
# body down. Any nouscli run that fails here fails the check.
#   requests.sh NOUSCLI BASE_URL
set -uo pipefail
nouscli=$1 base=$2
in=$(cd "$(dirname "$0")" && pwd)/inputs
export OPENAI_API_KEY=sk-types ANTHROPIC_API_KEY=sk-types GEMINI_API_KEY=sk-types
failed=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run() {  # one nouscli call; its output is not the point, its exit code is
  if ! "$nouscli" "$@" >/dev/null 2>"$err"; then
    echo "requests: nouscli $* failed: $(cat "$err")"
    failed=1
  fi
}
for provider in openai openai-responses anthropic gemini; do
  url=$base/v1
  [ "$provider" = gemini ] && url=$base/v1beta
  chat=(chat --provider "$provider" --base-url "$url" --model mock-1)
  run "${chat[@]}" "hello"
  run "${chat[@]}" "hello" --no-stream --system "Be brief." --max-tokens 50 --temperature 0.5 --top-p 0.9
  run "${chat[@]}" --messages "$in/conversation.json" --tools "$in/tools.json"
  run "${chat[@]}" --messages "$in/conversation.json" --tools "$in/tools.json" --no-stream
  # A schema without a type (OpenAI's "no parameters"), and a conversation
  # whose call id another provider made (Gemini-style, past OpenAI's 40 bytes).
  run "${chat[@]}" "the time?" --tools "$in/untyped_tools.json"
  run "${chat[@]}" --messages "$in/conversation_foreign_ids.json" --tools "$in/tools.json"
  # Text as parts in every role: each goes where the role's text goes.
  run "${chat[@]}" --messages "$in/conversation_text_parts.json" --tools "$in/tools.json"
  run "${chat[@]}" "look" --image https://example.com/cat.jpg --image "data:image/jpeg;base64,/9j/4AAQ"
  run "${chat[@]}" "think" --reasoning low
  run "${chat[@]}" "think hard" --reasoning high --no-stream
  for choice in auto none required get_time; do
    run "${chat[@]}" "weather?" --tools "$in/tools.json" --tool-choice "$choice"
  done
  run "${chat[@]}" "weather?" --tools "$in/tools.json" --tool-choice "auto" --extra-body '{}'
  run "${chat[@]}" "structured" --schema "$in/schema.json" --schema-name city
  run "${chat[@]}" "structured" --schema "$in/schema.json" --no-stream
  case $provider in
    openai|openai-responses)
      run "${chat[@]}" "structured" --schema "$in/schema.json" --no-strict
      run "${chat[@]}" "json" --json-object
      run "${chat[@]}" --messages "$in/conversation_detail.json"
      ;;
    gemini)
      run "${chat[@]}" "json" --json-object
      ;;
  esac
  case $provider in
    openai|gemini) run "${chat[@]}" "seeded" --seed 42 ;;
  esac
  case $provider in
    openai|anthropic|gemini) run "${chat[@]}" "stop" --stop "Paris" --stop "END" ;;
  esac
  case $provider in
    openai|openai-responses|anthropic)
      run "${chat[@]}" "weather?" --tools "$in/tools.json" --no-parallel-tool-calls
      run "${chat[@]}" "weather?" --tools "$in/tools.json" --tool-choice required --no-parallel-tool-calls
      run "${chat[@]}" "weather?" --tools "$in/strict_tools.json" --tool-strict
      ;;
  esac
  # Prompt caching, as each format takes it (docs/cost.md).
  case $provider in
    anthropic)
      run "${chat[@]}" "cached" --cache auto
      run "${chat[@]}" "cached" --cache auto --cache-ttl 1h --no-stream
      run "${chat[@]}" --messages "$in/conversation.json" --tools "$in/tools.json" --cache system,tools,last
      run "${chat[@]}" "cached" --system "Long instructions." --cache system,last --cache-ttl 5m
      run "${chat[@]}" "cached" --cache last --anthropic-version 2026-10-21
      ;;
    openai|openai-responses)
      run "${chat[@]}" "cached" --prompt-cache-key tenant-42 --prompt-cache-retention 24h
      run "${chat[@]}" "cached" --prompt-cache-key tenant-42 --prompt-cache-retention in_memory --no-stream
      ;;
    gemini)
      run "${chat[@]}" "cached" --cached-content cachedContents/abc123
      ;;
  esac
  if [ "$provider" = anthropic ]; then
    # The current API version, whose request type has no temperature or top_p.
    run "${chat[@]}" "hello" --anthropic-version 2026-10-21 --no-stream --system "Be brief."
    run "${chat[@]}" --messages "$in/conversation.json" --tools "$in/tools.json" --anthropic-version 2026-10-21
  fi
done
# Azure: the OpenAI formats at Azure's paths (the same bodies, recorded as theirs).
export AZURE_OPENAI_API_KEY=sk-types
run chat --provider azure --base-url "$base/openai/v1" --model mock-1 "hello" --tools "$in/tools.json"
run chat --provider azure --base-url "$base/openai/deployments/d1" --api-version 2024-10-21 --model mock-1 "hello" --no-stream
run chat --provider azure-responses --base-url "$base/openai/v1" --model mock-1 "hello" --reasoning low
run embed "first text" --provider azure --base-url "$base/openai/deployments/e1" --api-version 2024-10-21 --model e
# Bedrock Converse: held to the Runtime service model (service_model.py).
export AWS_ACCESS_KEY_ID=AKIDTYPES AWS_SECRET_ACCESS_KEY=types-secret AWS_REGION=us-east-1
bedrock=(chat --provider bedrock --base-url "$base" --model anthropic.claude-3-5-sonnet-20240620-v1:0)
run "${bedrock[@]}" "hello"
run "${bedrock[@]}" "hello" --no-stream --system "Be brief." --max-tokens 50 --temperature 0.5 --top-p 0.9 --stop END
# (Converse takes images as bytes only: the conversation without its https image.)
run "${bedrock[@]}" --messages "$in/conversation_bytes.json" --tools "$in/tools.json"
run "${bedrock[@]}" "look" --image "data:image/jpeg;base64,/9j/4AAQ"
run "${bedrock[@]}" "the time?" --tools "$in/untyped_tools.json"
run "${bedrock[@]}" --messages "$in/conversation_foreign_ids.json" --tools "$in/tools.json"
run "${bedrock[@]}" --messages "$in/conversation_text_parts.json" --tools "$in/tools.json"
run "${bedrock[@]}" "think" --reasoning high --no-stream
for choice in auto none required get_time; do
  run "${bedrock[@]}" "weather?" --tools "$in/tools.json" --tool-choice "$choice"
done
run "${bedrock[@]}" "weather?" --tools "$in/strict_tools.json" --tool-strict
run "${bedrock[@]}" "structured" --schema "$in/schema.json" --schema-name city
run "${bedrock[@]}" --messages "$in/conversation_bytes.json" --tools "$in/tools.json" --cache system,tools,last --cache-ttl 1h
run count-tokens --provider bedrock --base-url "$base" --model anthropic.claude-3-5-sonnet-20240620-v1:0 \
  --messages "$in/conversation_bytes.json" --tools "$in/tools.json" --max-tokens 99 --temperature 0.5
# Token counting: the counter's body, for every format that has one.
for provider in anthropic openai-responses gemini; do
  url=$base/v1
  [ "$provider" = gemini ] && url=$base/v1beta
  count=(count-tokens --provider "$provider" --base-url "$url" --model mock-1)
  run "${count[@]}" "hello" --system "Be brief." --temperature 0.5 --max-tokens 99
  [ "$provider" = openai-responses ] || run "${count[@]}" "stop" --stop END
  run "${count[@]}" --messages "$in/conversation.json" --tools "$in/tools.json" --tool-choice auto --reasoning low
  run "${count[@]}" "structured" --schema "$in/schema.json"
done
run count-tokens --provider anthropic --base-url "$base/v1" --model mock-1 "hi" --anthropic-version 2026-10-21 --cache auto
embed=(embed "first text" "second text")
openai=(--base-url "$base/v1" --model text-embedding-3-small)
gemini=(--provider gemini --base-url "$base/v1beta" --model text-embedding-004)
run "${embed[@]}" "${openai[@]}"
run "${embed[@]}" "${openai[@]}" --dimensions 8 --float
run "${embed[@]}" "${openai[@]}" --batch 1
run "${embed[@]}" "${gemini[@]}"
run "${embed[@]}" "${gemini[@]}" --dimensions 8
exit $failed
