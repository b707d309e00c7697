#pragma once
// Counting a request's input tokens before it is sent, by the provider's
// own counter, never a guess. Library nous_llm; docs/cost.md.

#include <cstdint>

#include "nous/http/options.hpp"
#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

/// The input tokens `request` would cost: Anthropic messages/count_tokens,
/// Gemini countTokens, Responses responses/input_tokens, each sent the body
/// the call would send less what the counter's request type does not take
/// (sampling, stop, stream, output limits). OpenAI chat completions has no
/// counter: invalid_argument. A status >= 400 is an http_status error in the
/// provider's words; an answer without the count is protocol.
Result<std::int64_t> count_tokens(const ChatRequest& request,
                                  const nous::http::Options& options = {});

}  // namespace nous::llm
