#pragma once
// Provider helpers on top of nous_http: conversations (roles, text and image
// parts, tool calls and their results, reasoning with its signature) sent as
// OpenAI chat completions (and the many servers that speak it), the OpenAI
// Responses API, Anthropic Messages and Gemini generateContent; one Delta
// type for their stream items; an accumulator that assembles the final
// message, which turns into the message to append for the next turn; provider
// error bodies turned into readable errors. Library nous_llm; docs/llm.md.

#include <cstdint>
#include <functional>
#include <memory>
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

/// openai: chat completions; openai_responses: the Responses API
/// (POST {base}/responses).
enum class Provider { openai, anthropic, gemini, openai_responses };

/// "openai", "anthropic", "gemini", "openai-responses".
std::string_view to_string(Provider provider) noexcept;
/// The provider of a name above; nullopt for anything else.
std::optional<Provider> provider_from_name(std::string_view name) noexcept;
/// https://api.openai.com/v1 (both OpenAI formats), https://api.anthropic.com/v1,
/// https://generativelanguage.googleapis.com/v1beta.
std::string default_base_url(Provider provider);
/// The environment variable that conventionally holds the provider's key:
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY (the official SDKs read these).
std::string default_api_key_env(Provider provider);

/// One part of a message's content beyond its text: more text, or an image.
struct ContentPart {
    enum class Kind { text, image };
    Kind kind = Kind::text;
    std::string text;        ///< kind text
    std::string image_url;   ///< kind image, by URL (https); empty when given as data
    std::string media_type;  ///< kind image as data: "image/png", "image/jpeg"...
    std::string data;        ///< kind image as data: the base64 bytes

    static ContentPart text_part(std::string text);
    /// An image by URL; a `data:MEDIA;base64,DATA` URL becomes media type and data.
    static ContentPart image(std::string url);
    static ContentPart image_data(std::string media_type, std::string base64);
};

/// A tool call the model made.
struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  ///< the call's JSON arguments as one string, as OpenAI sends them
    /// Gemini's thoughtSignature on the call's part: sent back with it on the next turn.
    std::string signature;
};

/// The model's reasoning on an assistant message, and what the provider needs
/// to accept it back: Anthropic's thinking `signature`, Gemini's
/// `thoughtSignature`, the Responses API's reasoning item (`id`,
/// `encrypted_content` as the signature).
struct Reasoning {
    std::string text;
    std::string signature;
    std::string id;  ///< Responses API: the reasoning item's id
    bool empty() const noexcept { return text.empty() && signature.empty() && id.empty(); }
};

/// A message of the conversation. Roles: "system", "user", "assistant",
/// "tool" (a tool's result). Each provider's mapping is in docs/llm.md.
struct ChatMessage {
    ChatMessage() = default;
    /// A message of text: ChatMessage{"user", "Hello"}.
    ChatMessage(std::string role_, std::string content_)
        : role(std::move(role_)), content(std::move(content_)) {}

    std::string role;
    std::string content;  ///< the text (a tool result's content)
    /// After `content`: more text parts and images (user messages).
    std::vector<ContentPart> parts;
    std::vector<ToolCall> tool_calls;  ///< assistant: the calls it made
    Reasoning reasoning;               ///< assistant: sent back where the provider needs it
    std::string tool_call_id;          ///< tool: the id of the call this answers
    /// tool: the function's name (Gemini's functionResponse names it); when
    /// empty, taken from the call with `tool_call_id` earlier in the conversation.
    std::string tool_name;
    bool is_error = false;  ///< tool: the result reports a failure

    static ChatMessage system(std::string text);
    static ChatMessage user(std::string text, std::vector<ContentPart> parts = {});
    static ChatMessage assistant(std::string text, std::vector<ToolCall> tool_calls = {});
    static ChatMessage tool_result(std::string call_id, std::string content, bool is_error = false);
};

/// How hard a reasoning model thinks: OpenAI `reasoning_effort`, Responses
/// `reasoning.effort`, Anthropic and Gemini thinking budgets of 1024, 4096,
/// 16384 tokens.
enum class ReasoningEffort { low, medium, high };
std::optional<ReasoningEffort> reasoning_effort_from_name(std::string_view name) noexcept;

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
    std::string signature;  ///< Gemini's thoughtSignature on the call's part
};

/// What one stream item of any provider adds to the message.
struct Delta {
    std::string text;                          ///< a text fragment (may be empty)
    std::string reasoning;                     ///< a reasoning (thinking) text fragment
    std::string reasoning_signature;           ///< the reasoning's signature (or a piece of it)
    std::string reasoning_id;                  ///< Responses API: the reasoning item's id
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
namespace detail {
struct ResponsesState;
class EventJson;
}  // namespace detail

class DeltaParser {
  public:
    explicit DeltaParser(Provider provider);
    ~DeltaParser();
    DeltaParser(DeltaParser&&) noexcept;
    DeltaParser& operator=(DeltaParser&&) noexcept;
    /// Appends the deltas of `event`. Keep-alive comments and pings add
    /// nothing. A malformed event is a `protocol` error value (never a throw);
    /// the caller decides whether the stream goes on.
    std::optional<Error> parse(const nous::http::Event& event, std::vector<Delta>& out);
    /// The same from a view (Stream::next_view): no copy of the event.
    std::optional<Error> parse(const nous::http::EventView& event, std::vector<Delta>& out);
    /// The same, with the commonest event kept out of `out`: when the event's
    /// whole delta is one Delta with nothing but its text (an OpenAI content
    /// chunk, its text possibly empty; an Anthropic text_delta or a Responses
    /// output_text delta, never empty), `text_only` views that text (valid
    /// until the next call, like the event) and `out` is left alone;
    /// otherwise `text_only` is empty and the deltas are appended as above.
    /// A stream's loop that reuses one Delta for those events touches a line
    /// of it per token instead of constructing and destroying a whole one.
    std::optional<Error> parse(const nous::http::EventView& event, std::vector<Delta>& out,
                               std::optional<std::string_view>& text_only);
    /// Tests and fuzzing: off, every event is read through a document, so
    /// that the fast reader of common chunks can be compared with it.
    void use_fast_paths(bool on) noexcept { fast_paths_ = on; }

  private:
    std::optional<Error> parse_event(const nous::http::EventView& event, std::vector<Delta>& out,
                                     std::optional<std::string_view>* text_only);
    /// Everything the fast readers of parse_event do not take, through a
    /// document: a function of its own, so that the document's locals are
    /// not in the frame every token's event runs in.
    std::optional<Error> parse_document(const nous::http::EventView& event, std::string_view data,
                                        std::vector<Delta>& out);

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
    std::unique_ptr<detail::ResponsesState> responses_;  ///< openai_responses only
    std::unique_ptr<detail::EventJson> json_;            ///< the reused document events parse into
    bool fast_paths_ = true;
};

/// The assembled assistant message.
struct ChatResult {
    std::string text;
    std::vector<ToolCall> tool_calls;
    Reasoning reasoning;  ///< empty when the model sent none
    std::optional<std::string> finish_reason;
    std::optional<Usage> usage;               ///< nullopt when the provider sent none
    std::optional<std::string> stream_error;  ///< an error the provider sent inside the stream
    /// The provider's terminal signal arrived (always, for a whole response).
    bool complete = false;
    /// The provider's id of the request (nous::http::Response::request_id), "" when none.
    std::string request_id;
    /// The rate limit the response's headers reported, if any (parse_rate_limit).
    std::optional<RateLimit> rate_limit;
    /// The response's headers (lower-case names), for what the fields above do not say.
    Headers headers;

    /// The assistant message to append to the conversation for the next
    /// turn: text, tool calls and reasoning, signatures included.
    ChatMessage message() const;
};

/// Deltas in, the final message out: text concatenated, tool-call fragments
/// joined by index (in index order), usage and finish reason kept. Linear in
/// the input: each fragment finds its call in constant time.
class Accumulator {
  public:
    void add(const Delta& delta);
    /// add() of a Delta with nothing but this text.
    void add_text(std::string_view text) { partial_.text += text; }
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
/// "finish_reason":..,"usage":{"input_tokens","output_tokens","cached_input_tokens",
/// "reasoning_tokens"} or null,"reasoning":..,"request_id":..,"rate_limit":..,
/// "message":message_to_json(result.message())}.
std::string to_json(const ChatResult& result);

/// A conversation in OpenAI's chat shape, the `nouscli chat --messages` file:
/// [{"role","content":string|[parts]|null,"tool_calls":[{"id","type":"function",
/// "function":{"name","arguments"}}]?,"tool_call_id"?}], parts {"type":"text","text"}
/// and {"type":"image_url","image_url":{"url"}}. Our additions, so that a turn's
/// message goes back whole: "reasoning":{"text","signature","id"} on an
/// assistant message, "thought_signature" on a tool call, "is_error" and
/// "name" on a tool result. invalid_argument naming the first bad message.
Result<std::vector<ChatMessage>> messages_from_json(std::string_view json);
/// One message in that shape.
std::string message_to_json(const ChatMessage& message);
/// Tools as `nouscli chat --tools` takes them: [{"name","description","parameters"}].
Result<std::vector<ToolSpec>> tools_from_json(std::string_view json);

}  // namespace nous::llm
