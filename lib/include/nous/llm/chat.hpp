#pragma once
// Provider helpers on top of nous_http: chat requests for OpenAI chat
// completions (and the many servers that speak it), Anthropic Messages and
// Gemini generateContent; one Delta type for their stream items; an
// accumulator that assembles the final message; provider error bodies turned
// into readable errors. Library nous_llm; docs/llm.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "nous/llm/rate_limit.hpp"

namespace nous::llm {

using nous::http::Error;
using nous::http::Headers;
template <typename T>
using Result = nous::http::Result<T>;

enum class Provider { openai, anthropic, gemini };

/// "openai", "anthropic", "gemini".
std::string_view to_string(Provider provider) noexcept;
/// The provider of a name above; nullopt for anything else.
std::optional<Provider> provider_from_name(std::string_view name) noexcept;
/// https://api.openai.com/v1, https://api.anthropic.com/v1,
/// https://generativelanguage.googleapis.com/v1beta.
std::string default_base_url(Provider provider);
/// The environment variable that conventionally holds the provider's key:
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY (the official SDKs read these).
std::string default_api_key_env(Provider provider);

struct ChatMessage {
    std::string role;  ///< "user" or "assistant" (Gemini's "model" is written for "assistant")
    std::string content;
};

/// A tool the model may call; `parameters_schema` is a JSON Schema object as JSON text.
struct ToolSpec {
    std::string name;
    std::string description;
    std::string parameters_schema = R"({"type":"object","properties":{}})";
};

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

struct Usage {
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    /// Of the input, read from the provider's cache (OpenAI cached_tokens,
    /// Anthropic cache_read_input_tokens, Gemini cachedContentTokenCount); 0 when not reported.
    std::int64_t cached_input_tokens = 0;
    /// Of the output, spent reasoning (OpenAI reasoning_tokens, Gemini
    /// thoughtsTokenCount); 0 when not reported.
    std::int64_t reasoning_tokens = 0;
};

/// A piece of one tool call: the first piece of an index usually carries the
/// id and name, later ones argument bytes (JSON text, in order).
struct ToolCallDelta {
    /// The call this piece belongs to: the provider's index, 64-bit as sent
    /// (a piece without one continues the last call unless it brings a new id).
    std::int64_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
};

/// What one stream item of any provider adds to the message.
struct Delta {
    std::string text;                          ///< a text fragment (may be empty)
    std::vector<ToolCallDelta> tool_calls;     ///< tool-call fragments
    std::optional<std::int64_t> input_tokens;  ///< usage, when this item reports it
    std::optional<std::int64_t> output_tokens;
    std::optional<std::int64_t> cached_input_tokens;  ///< see Usage
    std::optional<std::int64_t> reasoning_tokens;
    std::optional<std::string>
        finish_reason;  ///< the provider's own value: stop, tool_calls, end_turn, STOP...
    std::optional<std::string> error;  ///< an error inside the stream, in the provider's words
    /// The provider's terminal signal: an OpenAI `finish_reason`, Anthropic
    /// `message_stop`, a Gemini `finishReason`. A stream that ends cleanly
    /// without one was cut short.
    bool end_of_message = false;
};

/// Turns one provider's stream events into deltas. Keeps the little state a
/// provider needs (Anthropic content blocks, Gemini call numbering); one per stream.
class DeltaParser {
  public:
    explicit DeltaParser(Provider provider) noexcept : provider_(provider) {}
    /// Appends the deltas of `event`. Keep-alive comments and pings add
    /// nothing. A malformed event is a `protocol` error value (never a throw);
    /// the caller decides whether the stream goes on.
    std::optional<Error> parse(const nous::http::Event& event, std::vector<Delta>& out);

  private:
    Provider provider_;
    int gemini_calls_ = 0;
    /// OpenAI-compatible servers that omit a tool call's "index": the call
    /// the last piece went to, and the next free index for a new id.
    struct UnindexedCalls {
        bool any = false;
        std::int64_t last_index = 0;
        std::int64_t next_index = 0;
        std::string last_id;
    } openai_calls_;
};

struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  ///< the call's JSON arguments as one string, as OpenAI sends them
};

/// The assembled assistant message.
struct ChatResult {
    std::string text;
    std::vector<ToolCall> tool_calls;
    std::optional<std::string> finish_reason;
    std::optional<Usage> usage;               ///< nullopt when the provider sent none
    std::optional<std::string> stream_error;  ///< an error the provider sent inside the stream
    /// The provider's terminal signal arrived (always, for a whole response).
    bool complete = false;
    /// The provider's id of the request (nous::http::Response::request_id), "" when none.
    std::string request_id;
    /// The rate limit the response's headers reported, if any (parse_rate_limit).
    std::optional<RateLimit> rate_limit;
};

/// Deltas in, the final message out: text concatenated, tool-call fragments
/// joined by index (in index order), usage and finish reason kept. Linear in
/// the input: each fragment finds its call in constant time.
class Accumulator {
  public:
    void add(const Delta& delta);
    ChatResult result() const;

  private:
    struct Call {
        std::int64_t index = 0;
        ToolCall call;
    };
    ChatResult partial_;
    std::vector<Call> calls_;
    std::unordered_map<std::int64_t, std::size_t> call_at_;  ///< index -> position in calls_
    bool any_usage_ = false;
    Usage usage_;
};

/// The same message from a non-streaming response body. `protocol` when the
/// body is not the provider's JSON.
Result<ChatResult> parse_chat_response(Provider provider, std::string_view body);

/// An http_status error whose message becomes the provider's own words
/// ({"error":{"message"}}, Anthropic {"type":"error","error":{"message"}},
/// Gemini {"error":{"code","message","status"}}); other errors unchanged.
Error provider_error(Provider provider, Error error);

/// Runs a chat request: streamed (calling `on_delta` for each delta as it
/// arrives; returning false stops the stream, and the message so far is
/// returned) or not, and returns the assembled message. A status >= 400 is an
/// http_status error carrying the provider's message; an error the provider
/// sends inside a stream ends it and is reported in ChatResult::stream_error.
Result<ChatResult> run_chat(const ChatRequest& request, const nous::http::Options& options = {},
                            const std::function<bool(const Delta&)>& on_delta = {});

/// The message as one JSON object: {"text":..,"tool_calls":[{"id","name","arguments"}],
/// "finish_reason":..,"usage":{"input_tokens","output_tokens"} or null}.
std::string to_json(const ChatResult& result);

}  // namespace nous::llm
