#pragma once
// Provider helpers on top of nous_http, in one include: conversations (roles,
// text and image parts, tool calls and their results, reasoning with its
// signature) sent as OpenAI chat completions (and the many servers that speak
// it), the OpenAI Responses API, Anthropic Messages and Gemini
// generateContent; one Delta type for their stream items; an accumulator that
// assembles the final message, which turns into the message to append for
// the next turn; provider error bodies turned into readable errors. Library
// nous_llm; docs/llm.md.

#include "nous/llm/conversation.hpp"
#include "nous/llm/count_tokens.hpp"
#include "nous/llm/delta.hpp"
#include "nous/llm/json_shapes.hpp"
#include "nous/llm/partial_json.hpp"
#include "nous/llm/provider.hpp"
#include "nous/llm/rate_limit.hpp"
#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"
#include "nous/llm/run_chat.hpp"
