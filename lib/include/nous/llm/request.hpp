#pragma once
// A chat request, and the HTTP call it becomes in its provider's format.

#include <optional>
#include <string>
#include <vector>

#include "nous/llm/conversation.hpp"
#include "nous/llm/provider.hpp"

namespace nous::llm {

struct ChatRequest {
    Provider provider = Provider::openai;
    std::string base_url;  ///< empty: default_base_url(provider)
    std::string api_key;   ///< empty: no credential header
    std::string model;     ///< required
    std::string system;    ///< empty: no system prompt
    std::vector<ChatMessage> messages;
    /// Anthropic requires one: 1024 is sent when unset. Others: none unless set.
    std::optional<int> max_tokens;
    std::optional<double> temperature;
    std::vector<ToolSpec> tools;
    /// Asks for reasoning (and, where the provider can, its text); none when unset.
    std::optional<ReasoningEffort> reasoning_effort;
    bool stream = true;
    /// Sent after the provider's headers; one with the same name replaces the provider's.
    Headers headers;
};

/// The HTTP request a ChatRequest becomes.
struct HttpCall {
    std::string url;
    Headers headers;  ///< Content-Type, the provider's credential header, anthropic-version
    std::string body;
};

/// OpenAI: POST {base}/chat/completions, Authorization: Bearer; streams ask for
/// the usage chunk (stream_options.include_usage). Anthropic: POST
/// {base}/messages, x-api-key, anthropic-version: 2023-06-01. Gemini: POST
/// {base}/models/{model}:streamGenerateContent?alt=sse (or :generateContent),
/// x-goog-api-key. invalid_argument for a missing model or a tool schema that
/// is not a JSON object.
Result<HttpCall> build_chat_call(const ChatRequest& request);

}  // namespace nous::llm
