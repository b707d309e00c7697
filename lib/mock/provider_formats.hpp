#pragma once
// What the mock server answers in each provider's format: OpenAI chat
// completions, the Responses API, Anthropic Messages, Gemini generateContent,
// streamed (as SSE events) and not, with text and, when the request offers
// tools (and holds no tool result yet), one tool call; reasoning with a
// signature when the request asks for it. Generated as it is sent: the memory a reply holds does
// not grow with its length (a 100,000-token reply costs what a 16-token one does).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nous::http::mock {

enum class Format { openai, anthropic, gemini, responses, bedrock };

struct Reply {
    std::string model;
    std::int64_t tokens = 16;  ///< text tokens; token i is word(i)
    std::string tool_name;     ///< empty: no tool call
    int prompt_tokens = 1;
    /// Of prompt_tokens, read from the prompt cache or written to it (prompt_caches.hpp).
    int cache_read = 0, cache_write = 0;
    bool include_usage = true;  ///< OpenAI streams: only when asked (stream_options.include_usage)
    bool reasoning = false;     ///< reasoning text (with a signature) before the answer
    /// A text given whole (a structured answer, a reply cut at a stop
    /// sequence, a refusal's words), sent kPieceBytes a token event, and
    /// held once; not `pieced`: `tokens` words. set_text() sets both.
    bool pieced = false;
    std::string text;
    bool refusal = false;       ///< the model refuses (OpenAI refusal; Anthropic stop_reason)
    std::string stop_sequence;  ///< the text ended before this stop sequence
};

/// The bytes of one piece of a text given whole: a model's small deltas.
inline constexpr std::size_t kPieceBytes = 4;
/// `reply`'s text given whole, its tokens the pieces it is sent in.
void set_text(Reply& reply, std::string text);
/// The text of token `i` of `reply`: its piece, or word(i).
std::string_view token_text(const Reply& reply, std::int64_t i) noexcept;
/// The whole text of `reply`'s tokens.
std::string all_text(const Reply& reply);

/// The text of token `i` (a fixed cycle of 16 words, none needing JSON escapes).
std::string_view word(std::int64_t i) noexcept;

/// The SSE events of a streamed reply, one at a time, each complete with its
/// blank line; OpenAI's end with `data: [DONE]`.
class EventStream {
  public:
    EventStream(Format format, Reply reply);
    /// The next event into `out` (replaced); false after the last.
    bool next(std::string& out);
    /// Events before the first token's (Anthropic's message_start and block start).
    std::size_t prologue_size() const noexcept { return prologue_.size(); }
    Format format() const noexcept { return format_; }

  private:
    Format format_;
    Reply reply_;
    std::vector<std::string> prologue_,
        epilogue_;            ///< the events around the tokens: O(1) in their number
    std::string token_head_;  ///< the JSON before a token's text
    std::size_t position_ = 0;
};

/// A non-streamed reply's JSON body: `head`, the text of every token, `tail`.
struct WholeBody {
    std::string head;
    std::int64_t tokens = 0;
    std::string tail;
    std::uint64_t size() const noexcept;
    /// Appends body bytes from `offset` to `out`, at most about `max` of them;
    /// returns the bytes appended (0 at the end).
    std::size_t read(std::uint64_t offset, std::size_t max, std::string& out) const;
};
WholeBody whole_body(Format format, const Reply& reply);

/// A JSON string literal (quotes included) for `text`.
std::string json_string(std::string_view text);

// An error body in each provider's own shape (a fault played, a request refused).
/// OpenAI's formats: `code` or `param` empty is null.
std::string openai_error(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param = {});
std::string anthropic_error(std::string_view type, std::string_view message);
/// Gemini's: `details`, when given, is the JSON array of its details.
std::string gemini_error(int code, std::string_view message, std::string_view status,
                         std::string_view details = {});
/// Bedrock's: {"message"}, with the exception's name in the header
/// x-amzn-ErrorType, whose value bedrock_error_type() gives.
std::string bedrock_error(std::string_view message);
std::string bedrock_error_type(std::string_view exception);

}  // namespace nous::http::mock
