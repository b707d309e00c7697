#pragma once
// The assembled assistant message: from deltas (Accumulator) or from a whole
// response body; and a provider's error body in its own words.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nous/llm/conversation.hpp"
#include "nous/llm/delta.hpp"
#include "nous/llm/partial_json.hpp"
#include "nous/llm/rate_limit.hpp"

namespace nous::llm {

/// Why a structured answer is not the value asked for (the text stays in
/// ChatResult::text).
struct OutputError {
    enum class Kind {
        refusal,   ///< the model declined (ChatResult::refusal holds its words)
        not_json,  ///< the text is not JSON (or, for json_object, not an object)
        schema,    ///< the value breaks the schema at `pointer`
    };
    Kind kind = Kind::not_json;
    std::string pointer;   ///< schema: the JSON pointer of the offending value
    std::string expected;  ///< what was expected there, or why the text is not JSON
    /// "refusal: ...", "not JSON: at byte 12: ...", "/items/0: expected type string".
    std::string message;
};

/// The assembled assistant message.
struct ChatResult {
    std::string text;
    std::vector<ToolCall> tool_calls;
    Reasoning reasoning;  ///< empty when the model sent none
    std::optional<std::string> finish_reason;
    std::optional<Usage> usage;  ///< nullopt when the provider sent none
    /// What the call cost in USD by ChatRequest::prices (through a Router:
    /// summed over the attempts that reported usage); nullopt without a
    /// table, without usage, or for a model the table does not price.
    std::optional<double> cost;
    std::optional<std::string> stream_error;  ///< an error the provider sent inside the stream
    /// The provider's terminal signal arrived (always, for a whole response).
    bool complete = false;
    /// The model's refusal, in its words (OpenAI `refusal`), never in `text`.
    std::optional<std::string> refusal;
    /// A structured output was asked for (ChatRequest::response_format).
    bool structured = false;
    /// The answer parsed (a structured output, complete and valid).
    std::optional<JsonValue> parsed;
    /// A structured answer that is not what was asked for: refused, not JSON,
    /// or breaking the schema. The call itself succeeded.
    std::optional<OutputError> output_error;
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

}  // namespace nous::llm
