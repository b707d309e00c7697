#pragma once
// One chat request through nous_http, streamed or not.

#include <functional>

#include "nous/http/options.hpp"
#include "nous/llm/delta.hpp"
#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

/// Runs a chat request: streamed (calling `on_delta` for each delta as it
/// arrives; returning false stops the stream, and the message so far is
/// returned) or not, and returns the assembled message. A status >= 400 is an
/// http_status error carrying the provider's message; an error the provider
/// sends inside a stream ends it and is reported in ChatResult::stream_error.
Result<ChatResult> run_chat(const ChatRequest& request, const nous::http::Options& options = {},
                            const std::function<bool(const Delta&)>& on_delta = {});

}  // namespace nous::llm
