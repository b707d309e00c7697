#pragma once
// One stream event's JSON, parsed into a document that is reused from event
// to event (nous_llm internal): its allocator's first block and the parse
// stacks live with it, made at the first event the fast readers below do
// not take, so that a steady stream of small events parses with no
// allocation (and a stream they take whole never makes them); the text is
// parsed in place in a copy the parser keeps (one memcpy instead of a copy
// of every string); and the depth limit is enforced while parsing (the
// parser is iterative and stops at the limit) instead of by a scan before it.

#include <rapidjson/document.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nous::llm::detail {

class EventJson {
  public:
    /// Nesting allowed in a provider's event: as nous_http's parse of server bytes.
    static constexpr std::size_t max_depth = 256;

    EventJson();
    ~EventJson();
    EventJson(const EventJson&) = delete;
    EventJson& operator=(const EventJson&) = delete;

    /// The root of `text`, valid until the next parse; nullptr with `error` set
    /// when it is not JSON or nests too deep.
    const rapidjson::Value* parse(std::string_view text, std::string& error);

    /// The common OpenAI-compatible token chunk, read without a document:
    /// the first choice's delta content and reasoning (reasoning_content, else
    /// reasoning), its finish reason, and the usage object's counts. False
    /// for anything else (tool calls, an error, reasoning details, malformed
    /// or deep JSON): the caller then parses a document, which reads every shape. Views point into
    /// `text` (or, for a string with an escape, into this parser) and are
    /// valid until the next call and while `text` lives.
    struct OpenAIChunk {
        bool has_content = false;
        std::string_view content;
        bool has_reasoning_content = false, has_reasoning = false;
        std::string_view reasoning_content, reasoning;
        bool has_finish_reason = false;
        std::string_view finish_reason;
        /// A root "usage" object (the last chunk with stream_options.include_usage).
        bool has_usage = false;
        std::optional<std::int64_t> input_tokens, output_tokens, cached_input_tokens,
            reasoning_tokens;
    };
    bool openai_chunk(std::string_view text, OpenAIChunk& out);
    /// Whether the last openai_chunk() read the chunk from the stream's
    /// chunk shape (below) rather than by a scan: for tests.
    bool last_read_by_shape() const noexcept { return read_by_shape_; }

    /// A token event's text, and whether it is reasoning: what the
    /// Anthropic and Responses readers below find.
    struct TextDelta {
        bool reasoning = false;
        std::string_view text;
    };

    /// The common Anthropic token event, read without a document: a
    /// content_block_delta (by the data's "type", else `event_type`, the SSE
    /// event name) whose delta is a text_delta (`text`) or a thinking_delta
    /// (`thinking`, then `reasoning` is true). False for anything else: the
    /// caller then parses a document. The view lives as openai_chunk's do.
    bool anthropic_delta(std::string_view text, std::string_view event_type, TextDelta& out);

    /// The common Bedrock Converse token event, read without a document: a
    /// contentBlockDelta (`event_type`, the event-stream message's) whose
    /// delta holds one "text" string and nothing else. False for anything
    /// else; the view lives as openai_chunk's do.
    bool converse_delta(std::string_view text, std::string_view event_type, TextDelta& out);

    /// The common Responses API token event, read without a document: a
    /// response.output_text.delta (text), or a reasoning summary or
    /// reasoning text delta (`reasoning` true), with its "delta" string.
    /// False for anything else; the view lives as openai_chunk's do.
    bool responses_delta(std::string_view text, TextDelta& out);

    /// The common Gemini chunk, read without a document: one candidate whose
    /// content's parts hold at most one "text" and one "thought" flag (no
    /// thought signature or function call), its finishReason, and the
    /// usageMetadata counts. False for anything else (an error, a tool call,
    /// a signature, several candidates, texts or flags, a member that is not
    /// what it should be, malformed or deep JSON): the caller then parses a
    /// document. The views live as openai_chunk's do.
    struct GeminiChunk {
        bool has_text = false;
        std::string_view text;
        bool thought = false;  ///< the text is a thought (reasoning): a part's "thought": true
        bool has_finish_reason = false;
        std::string_view finish_reason;
        std::optional<std::int64_t> input_tokens, output_tokens, cached_input_tokens,
            reasoning_tokens;
    };
    bool gemini_chunk(std::string_view text, GeminiChunk& out);

  private:
    using Pool = rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>;
    using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;
    // Sized for a token's event in any format (the fixtures' largest token
    // events take ~650 bytes of values and ~850 of stack): a larger event
    // takes one more block, freed at the next parse. The pool writes a
    // header at the start of each buffer, so these pages are resident from
    // the moment the parts are made: only at the first document read (an
    // OpenAI stream of plain chunks, read by the fast reader and its shape,
    // never makes them: 3.6 KB a stream).
    static constexpr std::size_t kValueBlock = 2048, kStackBlock = 1536;
    struct DocumentParts {
        DocumentParts()
            : values(value_buffer, sizeof value_buffer),
              stacks(stack_buffer, sizeof stack_buffer) {}
        alignas(8) char value_buffer[kValueBlock];
        alignas(8) char stack_buffer[kStackBlock];
        Pool values;
        Pool stacks;
        std::optional<Document> document;
        /// The event's bytes, copied: parsed in place, so that strings are not
        /// copied again (the document's strings point here until the next parse).
        std::string text;
    };
    std::unique_ptr<DocumentParts> document_;
    static constexpr std::size_t kScanPadding = 16;
    /// The fast readers' strings that have an escape, decoded (capacity kept).
    std::string unescaped_;

    /// The shape of a stream's token chunks: they repeat their bytes but for
    /// the content string (and OpenAI's random "obfuscation" padding string).
    /// The last plain token chunk the reader took, without those strings'
    /// tokens (the holes); a chunk that is these bytes with a string in each
    /// hole is read without the scan. Kept for chunks up to kMaxShape bytes.
    struct ChunkShape {
        std::string literal;
        std::size_t hole_at[2] = {0, 0};  ///< where each hole is in `literal`
        int holes = 0;                    ///< 0: no shape yet
        int content_hole = 0;
    } shape_;
    bool read_by_shape_ = false;
    static constexpr std::size_t kMaxShape = 1024;
    void remember_shape(std::string_view text, const OpenAIChunk& read, bool has_obfuscation,
                        std::string_view obfuscation);
    bool openai_chunk_by_shape(std::string_view text, OpenAIChunk& out);
};

}  // namespace nous::llm::detail
