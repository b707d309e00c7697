#pragma once
// One Delta type for the stream items of every provider, and the parser that
// turns a provider's events into deltas.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nous/http/stream.hpp"
#include "nous/llm/provider.hpp"

namespace nous::llm {

/// Token counts that mean the same for every provider, so that a cost
/// computed from them is right everywhere (docs/llm.md, "Usage").
struct Usage {
    /// Every input token, cache reads and writes included (Anthropic reports
    /// them apart: its input_tokens + cache_read_input_tokens +
    /// cache_creation_input_tokens).
    std::int64_t input_tokens = 0;
    /// Every output token, reasoning included (Gemini reports thoughts apart:
    /// candidatesTokenCount + thoughtsTokenCount).
    std::int64_t output_tokens = 0;
    /// Of the input, read from the provider's cache (OpenAI cached_tokens,
    /// Anthropic cache_read_input_tokens, Gemini cachedContentTokenCount); 0 when not reported.
    std::int64_t cached_input_tokens = 0;
    /// Of the input, written to the provider's cache (Anthropic
    /// cache_creation_input_tokens); 0 for the others.
    std::int64_t cache_write_input_tokens = 0;
    /// Of the cache writes, those kept for an hour (Anthropic
    /// cache_creation.ephemeral_1h_input_tokens), priced apart; 0 for the others.
    std::int64_t cache_write_1h_input_tokens = 0;
    /// Of the output, spent reasoning (OpenAI reasoning_tokens, Gemini
    /// thoughtsTokenCount, Anthropic output_tokens_details.thinking_tokens
    /// where sent); 0 when not reported.
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
    std::string text;                 ///< a text fragment (may be empty)
    std::string reasoning;            ///< a reasoning (thinking) text fragment
    std::string reasoning_signature;  ///< the reasoning's signature (or a piece of it)
    std::string reasoning_id;         ///< Responses API: the reasoning item's id
    /// A reasoning block the provider redacted, whole: its opaque data
    /// (Anthropic `redacted_thinking`, Bedrock `redactedContent`), to be sent
    /// back as it came.
    std::string reasoning_redacted;
    /// The model declined to answer (OpenAI `refusal`, Responses
    /// `response.refusal.delta`): a fragment of its words, never text.
    std::string refusal;
    std::vector<ToolCallDelta> tool_calls;     ///< tool-call fragments
    std::optional<std::int64_t> input_tokens;  ///< usage, when this item reports it
    std::optional<std::int64_t> output_tokens;
    std::optional<std::int64_t> cached_input_tokens;  ///< see Usage
    std::optional<std::int64_t> cache_write_input_tokens;
    std::optional<std::int64_t> cache_write_1h_input_tokens;
    std::optional<std::int64_t> reasoning_tokens;
    std::optional<std::string>
        finish_reason;  ///< the provider's own value: stop, tool_calls, end_turn, STOP...
    std::optional<std::string> error;  ///< an error inside the stream, in the provider's words
    /// The provider's terminal signal: an OpenAI `finish_reason`, Anthropic
    /// `message_stop`, a Gemini `finishReason`. A stream that ends cleanly
    /// without one was cut short.
    bool end_of_message = false;
};

namespace detail {
class EventReader;
class EventJson;
struct DeltaParserAccess;
}  // namespace detail

/// Turns one provider's stream events into deltas. Keeps the little state a
/// provider needs (Anthropic content blocks, Gemini call numbering); one per stream.
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

  private:
    friend struct detail::DeltaParserAccess;
    std::optional<Error> parse_event(const nous::http::EventView& event, std::vector<Delta>& out,
                                     std::optional<std::string_view>* text_only);
    /// Everything the format's fast reader does not take, through a document.
    std::optional<Error> parse_document(const nous::http::EventView& event, std::string_view data,
                                        std::vector<Delta>& out);

    std::unique_ptr<detail::EventReader> reader_;  ///< the format's, with its per-stream state
    std::unique_ptr<detail::EventJson> json_;      ///< the reused document events parse into
    bool fast_paths_ = true;
};

}  // namespace nous::llm
