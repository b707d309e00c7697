#pragma once
// What the mock server answers in each provider's format: OpenAI chat
// completions, Anthropic Messages, Gemini generateContent, streamed (as SSE
// events) and not, with text and, when the request offers tools, one tool call.

#include <string>
#include <vector>

namespace nous::http::mock {

enum class Format { openai, anthropic, gemini };

struct Reply {
    std::string model;
    std::vector<std::string> words;  ///< the text, token by token
    std::string tool_name;           ///< empty: no tool call
    int prompt_tokens = 1;
    bool include_usage = true;       ///< OpenAI streams: only when asked (stream_options.include_usage)
};

/// The SSE events of a streamed reply, each complete with its blank line;
/// OpenAI's end with `data: [DONE]`.
std::vector<std::string> stream_events(Format format, const Reply& reply);

/// The JSON body of a non-streamed reply.
std::string whole_body(Format format, const Reply& reply);

/// A JSON string literal (quotes included) for `text`.
std::string json_string(std::string_view text);

}  // namespace nous::http::mock
