// The reused event document: a depth guard between RapidJSON's iterative
// reader and the document that it builds; and the readers of the common
// OpenAI, Anthropic and Responses token events, on the strict scanner of
// json_scan.hpp.

// SIMD string and whitespace scanning for the in-place parses of this file
// (x86-64 always has SSE2). Only this file parses in place, so no other
// translation unit instantiates these reader paths without it.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif

#include "event_json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <functional>

#include "json_scan.hpp"

namespace nous::llm::detail {

namespace {

/// Forwards every SAX call to `next`; refuses an object or array past `max` levels.
template <typename Next>
struct DepthGuard {
    Next& next;
    std::size_t max;
    std::size_t depth = 0;
    bool too_deep = false;

    bool Null() { return next.Null(); }
    bool Bool(bool b) { return next.Bool(b); }
    bool Int(int i) { return next.Int(i); }
    bool Uint(unsigned u) { return next.Uint(u); }
    bool Int64(std::int64_t i) { return next.Int64(i); }
    bool Uint64(std::uint64_t u) { return next.Uint64(u); }
    bool Double(double d) { return next.Double(d); }
    bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
        return next.RawNumber(s, n, copy);
    }
    bool String(const char* s, rapidjson::SizeType n, bool copy) { return next.String(s, n, copy); }
    bool Key(const char* s, rapidjson::SizeType n, bool copy) { return next.Key(s, n, copy); }
    bool StartObject() { return enter() && next.StartObject(); }
    bool EndObject(rapidjson::SizeType n) {
        --depth;
        return next.EndObject(n);
    }
    bool StartArray() { return enter() && next.StartArray(); }
    bool EndArray(rapidjson::SizeType n) {
        --depth;
        return next.EndArray(n);
    }

  private:
    bool enter() {
        if (++depth <= max) return true;
        too_deep = true;
        return false;
    }
};

/// The SAX reader of the common OpenAI chunk (EventJson::openai_chunk). Where
/// a document read would see something this one does not handle, it stops
/// (returns false) and the document read runs instead, so the two always agree.
class OpenAIChunkReader {
  public:
    explicit OpenAIChunkReader(EventJson::OpenAIChunk& out) : out_(out) {}

    bool Null() { return scalar(Kind::null); }
    bool Bool(bool) { return scalar(Kind::other); }
    bool Int64(std::int64_t i) { return integer(i); }
    bool NonInteger() { return scalar(Kind::other); }
    bool String(std::string_view v) { return value_string(v); }
    bool Key(std::string_view key) {
        key_ = key;
        if (depth_ == 1 && key_ == "choices") {
            // Only the first "choices" counts, whatever its value (a document
            // read finds the first): a later array is skipped like any member.
            first_choices_ = !choices_seen_;
            choices_seen_ = true;
        }
        return true;
    }
    bool StartObject() {
        const std::size_t at = depth_++;
        if (depth_ > 8) return false;
        if (at == 0) return true;                                        // the root
        if (at == 2 && place_ == Place::choices) return start_choice();  // choices[k]
        if (at == 3 && place_ == Place::choice && key_ == "delta") {
            if (delta_seen_) return false;  // a second "delta": the document read takes the first
            delta_seen_ = true;
            place_ = Place::delta;
            return true;
        }
        if (at == 1 && place_ == Place::root && key_ == "usage") {
            // Only the first "usage" counts (a document read finds the
            // first); a later one is skipped like any member.
            if (usage_.seen) return true;
            usage_.seen = true;
            out_.has_usage = true;
            place_ = Place::usage;
            return true;
        }
        if (at == 2 && place_ == Place::usage) {
            Usage::Seen* details = usage_details(key_);
            if (details && !details->seen) {
                details->seen = true;
                usage_.in = details;
                place_ = Place::usage_details;
                return true;
            }
        }
        if (place_ == Place::usage || place_ == Place::usage_details) {
            usage_member(at, nullptr);
            return true;  // any other object in the usage: not read
        }
        return unknown_container();
    }
    bool EndObject(std::uint32_t) {
        --depth_;
        if (depth_ == 3 && place_ == Place::delta) place_ = Place::choice;
        if (depth_ == 2 && place_ == Place::choice) end_choice();
        if (depth_ == 2 && place_ == Place::usage_details) place_ = Place::usage;
        if (depth_ == 1 && place_ == Place::usage) place_ = Place::root;
        return true;
    }
    bool StartArray() {
        const std::size_t at = depth_++;
        if (depth_ > 8 || at == 0) return false;  // the root must be an object
        if (place_ == Place::usage || place_ == Place::usage_details) {
            usage_member(at, nullptr);
            return true;  // an array in the usage: not read
        }
        if (at == 1 && key_ == "choices" && place_ == Place::root && first_choices_) {
            place_ = Place::choices;
            return true;
        }
        return unknown_container();
    }
    bool EndArray(std::uint32_t) {
        --depth_;
        if (depth_ == 1 && place_ == Place::choices) place_ = Place::root;
        return true;
    }

  private:
    enum class Place { root, choices, choice, delta, usage, usage_details, skipped };
    enum class Kind { null, other };

    bool start_choice() {
        place_ = Place::choice;
        choice_ = {};
        delta_seen_ = false;
        return true;
    }
    void end_choice() {
        place_ = Place::choices;
        // Only the first choice (index 0, or none) is the message.
        if (choice_.index_nonzero) return;
        auto take = [](bool has, std::string_view v, bool& out_has, std::string_view& out) {
            if (has && !out_has) {
                out_has = true;
                out = v;
            } else if (has) {
                return false;  // a second first choice: the document read concatenates
            }
            return true;
        };
        ok_ = ok_ && take(choice_.has_content, choice_.content, out_.has_content, out_.content) &&
              take(choice_.has_reasoning_content, choice_.reasoning_content,
                   out_.has_reasoning_content, out_.reasoning_content) &&
              take(choice_.has_reasoning, choice_.reasoning, out_.has_reasoning, out_.reasoning) &&
              take(choice_.has_finish, choice_.finish, out_.has_finish_reason, out_.finish_reason);
    }

    /// A container this reader does not read: harmless only where its
    /// contents cannot change the delta.
    bool unknown_container() {
        if (depth_ == 2 && place_ == Place::root) {
            // Root members: "usage", "error" objects change the delta.
            return key_ != "usage" && key_ != "error";
        }
        if (place_ == Place::delta) return false;  // tool_calls, reasoning_details, audio...
        if (place_ == Place::choice &&
            (key_ == "delta" || key_ == "finish_reason" || key_ == "index"))
            return false;
        if (place_ == Place::choices) return false;  // a choice that is not an object
        return depth_ > 3 || place_ == Place::choice || place_ == Place::root;
    }

    bool integer(std::int64_t v) {
        if (place_ == Place::usage || place_ == Place::usage_details) {
            usage_member(depth_, &v);
            return true;
        }
        if (depth_ == 3 && place_ == Place::choice && key_ == "index") {
            if (!choice_.index_seen) choice_.index_nonzero = v != 0;
            choice_.index_seen = true;
            return true;
        }
        return scalar(Kind::other);
    }

    bool scalar(Kind kind) {
        if (depth_ == 0) return false;  // the root is not an object
        usage_member(depth_, nullptr);  // not an integer: still the first of its key
        if (depth_ == 1 && key_ == "usage" && kind == Kind::null) {
            usage_.seen = true;  // "usage": null first: a later object is not read
            return true;
        }
        if (depth_ == 1 && (key_ == "error" || key_ == "usage")) return kind == Kind::null;
        if (depth_ == 2 && place_ == Place::choices)
            return false;  // a choice that is not an object
        if (depth_ == 3 && place_ == Place::choice && key_ == "index") {
            choice_.index_seen = true;  // not an integer: a document read ignores it
            return true;
        }
        if (depth_ == 3 && place_ == Place::choice && key_ == "delta") return false;
        // A null or non-string value still is the first of its key: a later
        // duplicate must not be taken (a document read finds the first).
        if (depth_ == 3 && place_ == Place::choice && key_ == "finish_reason")
            choice_.finish_seen = true;
        if (depth_ == 4 && place_ == Place::delta) {
            if (key_ == "content") choice_.content_seen = true;
            if (key_ == "reasoning_content") choice_.reasoning_content_seen = true;
            if (key_ == "reasoning") choice_.reasoning_seen = true;
        }
        return true;
    }

    bool value_string(std::string_view v) {
        if (depth_ == 0) return false;
        usage_member(depth_, nullptr);
        if (depth_ == 1 && key_ == "obfuscation" && !obfuscation_seen_) {
            // OpenAI's random padding, a new value in every chunk: where it
            // is, for the chunk's shape (EventJson::remember_shape).
            obfuscation_seen_ = true;
            obfuscation_ = v;
        }
        if (depth_ == 1 && key_ == "object" && v == "error") return false;  // vLLM's error shape
        if (depth_ == 1 && (key_ == "error" || key_ == "usage")) return false;
        if (depth_ == 2 && place_ == Place::choices) return false;
        if (depth_ == 3 && place_ == Place::choice) {
            if (key_ == "finish_reason" && !choice_.finish_seen) {
                choice_.finish_seen = true;
                choice_.has_finish = true;
                choice_.finish = v;
            } else if (key_ == "index") {
                choice_.index_seen = true;
            } else if (key_ == "delta") {
                return false;
            }
            return true;
        }
        if (depth_ == 4 && place_ == Place::delta) {
            auto first = [&](bool& seen, bool& has, std::string_view& out) {
                if (seen) return;
                seen = true;
                has = true;
                out = v;
            };
            if (key_ == "content")
                first(choice_.content_seen, choice_.has_content, choice_.content);
            if (key_ == "reasoning_content")
                first(choice_.reasoning_content_seen, choice_.has_reasoning_content,
                      choice_.reasoning_content);
            if (key_ == "reasoning")
                first(choice_.reasoning_seen, choice_.has_reasoning, choice_.reasoning);
        }
        return true;
    }

    struct Choice {
        bool index_seen = false, index_nonzero = false;
        bool content_seen = false, has_content = false;
        bool reasoning_content_seen = false, has_reasoning_content = false;
        bool reasoning_seen = false, has_reasoning = false;
        bool finish_seen = false, has_finish = false;
        std::string_view content, reasoning_content, reasoning, finish;
    };

    struct Usage {
        struct Seen {
            bool seen = false;
        };
        bool seen = false;
        Seen prompt, completion, cached, reasoning;  ///< the counts
        Seen input, output;                          ///< the two details objects
        Seen* in = nullptr;                          ///< the details object being read
    };
    Usage usage_;

    /// A member of the usage object (at depth 2) or of its details object
    /// (3), whatever its value: its key is seen from now on (a document read
    /// finds the first of each). An integer that is the first of a count is kept.
    void usage_member(std::size_t at, const std::int64_t* integer) {
        Usage::Seen* seen = nullptr;
        std::optional<std::int64_t>* into = nullptr;
        if (at == 2 && place_ == Place::usage) {
            if (key_ == "prompt_tokens") {
                seen = &usage_.prompt, into = &out_.input_tokens;
            } else if (key_ == "completion_tokens") {
                seen = &usage_.completion, into = &out_.output_tokens;
            } else if (Usage::Seen* details = usage_details(key_)) {
                details->seen = true;
            }
        } else if (at == 3 && place_ == Place::usage_details) {
            if (usage_.in == &usage_.input && key_ == "cached_tokens")
                seen = &usage_.cached, into = &out_.cached_input_tokens;
            else if (usage_.in == &usage_.output && key_ == "reasoning_tokens")
                seen = &usage_.reasoning, into = &out_.reasoning_tokens;
        }
        if (!seen || seen->seen) return;
        seen->seen = true;
        if (integer) *into = *integer;
    }
    Usage::Seen* usage_details(std::string_view key) {
        if (key == "prompt_tokens_details") return &usage_.input;
        if (key == "completion_tokens_details") return &usage_.output;
        return nullptr;
    }

    EventJson::OpenAIChunk& out_;
    std::size_t depth_ = 0;
    Place place_ = Place::root;
    std::string_view key_;
    Choice choice_;
    bool choices_seen_ = false, first_choices_ = false, delta_seen_ = false;

  public:
    bool ok_ = true;
    bool obfuscation_seen_ = false;
    std::string_view obfuscation_;  ///< the first root "obfuscation" string
};

/// A string member the Anthropic and Responses readers look at: kept the
/// first time; a second one stops the reader (the document read takes the
/// first, whatever it is, and decides).
bool first_string(bool& seen, std::string_view& slot, std::string_view v) {
    if (seen) return false;
    seen = true;
    slot = v;
    return true;
}

/// The reader of the common Anthropic token event (EventJson::anthropic_delta):
/// a content_block_delta whose delta is a text_delta or a thinking_delta.
/// Stricter than the document read where that costs nothing: a second
/// "type", "delta", "text" or "thinking" where it looks, or one of them that
/// is not what it should be, stops it, and the document read decides.
class AnthropicDeltaReader {
  public:
    explicit AnthropicDeltaReader(EventJson::TextDelta& out) : out_(out) {}

    bool Null() { return scalar(); }
    bool Bool(bool) { return scalar(); }
    bool Int64(std::int64_t) { return scalar(); }
    bool NonInteger() { return scalar(); }
    bool String(std::string_view v) {
        if (depth_ == 1 && key_ == Name::type) return first_string(root_type_seen_, root_type_, v);
        if (depth_ == 1 && key_ == Name::delta) return false;  // a delta that is not an object
        if (depth_ == 2 && in_delta_) {
            if (key_ == Name::type) return first_string(delta_type_seen_, delta_type_, v);
            if (key_ == Name::text) return first_string(text_seen_, text_, v);
            if (key_ == Name::thinking) return first_string(thinking_seen_, thinking_, v);
        }
        return depth_ > 0;
    }
    bool Key(std::string_view key) {
        key_ = Name::other;
        if (depth_ == 1 || (depth_ == 2 && in_delta_)) {
            if (key == "type") key_ = Name::type;
            if (depth_ == 1 && key == "delta") key_ = Name::delta;
            if (depth_ == 2 && key == "text") key_ = Name::text;
            if (depth_ == 2 && key == "thinking") key_ = Name::thinking;
        }
        return true;
    }
    bool StartObject() {
        const std::size_t at = depth_++;
        if (depth_ > 8) return false;
        if (at == 0) return true;  // the root
        if (at == 1 && key_ == Name::delta) {
            if (delta_seen_) return false;
            delta_seen_ = in_delta_ = true;
            return true;
        }
        return container();
    }
    bool EndObject(std::uint32_t) {
        if (--depth_ == 1) in_delta_ = false;
        return true;
    }
    bool StartArray() {
        const std::size_t at = depth_++;
        if (depth_ > 8 || at == 0) return false;  // the root must be an object
        return container();
    }
    bool EndArray(std::uint32_t) {
        --depth_;
        return true;
    }

    /// After a whole scan: whether the event is one this reader answers.
    bool finish(std::string_view event_type) {
        // The data's own "type" names the event; the SSE event name otherwise.
        const std::string_view type = root_type_seen_ ? root_type_ : event_type;
        if (type != "content_block_delta" || !delta_seen_) return false;
        if (delta_type_ == "text_delta" && text_seen_) {
            out_.reasoning = false;
            out_.text = text_;
            return true;
        }
        if (delta_type_ == "thinking_delta" && thinking_seen_) {
            out_.reasoning = true;
            out_.text = thinking_;
            return true;
        }
        return false;
    }

  private:
    enum class Name { other, type, delta, text, thinking };

    /// A container under a key this reader looks at: not the shape it reads.
    bool container() const {
        if (depth_ == 2) return key_ != Name::type && key_ != Name::delta;
        if (depth_ == 3 && in_delta_) return key_ == Name::other;
        return true;  // deeper inside a member this reader ignores
    }
    /// A scalar that is not a string: refused where a string must be.
    bool scalar() const {
        if (depth_ == 0) return false;
        if (depth_ == 1) return key_ != Name::type && key_ != Name::delta;
        if (depth_ == 2 && in_delta_) return key_ == Name::other;
        return true;
    }

    EventJson::TextDelta& out_;
    std::size_t depth_ = 0;
    Name key_ = Name::other;
    bool in_delta_ = false, delta_seen_ = false;
    bool root_type_seen_ = false, delta_type_seen_ = false, text_seen_ = false,
         thinking_seen_ = false;
    std::string_view root_type_, delta_type_, text_, thinking_;
};

/// The reader of the common Responses API token event
/// (EventJson::responses_delta): a response.output_text.delta, or a
/// reasoning summary or reasoning text delta, whose "delta" is its text.
/// A second "type" or "delta" at the root, or one that is not a string,
/// stops it, and the document read decides.
class ResponsesDeltaReader {
  public:
    explicit ResponsesDeltaReader(EventJson::TextDelta& out) : out_(out) {}

    bool Null() { return scalar(); }
    bool Bool(bool) { return scalar(); }
    bool Int64(std::int64_t) { return scalar(); }
    bool NonInteger() { return scalar(); }
    bool String(std::string_view v) {
        if (depth_ == 0) return false;
        if (depth_ == 1 && key_ == Name::type) return first_string(type_seen_, type_, v);
        if (depth_ == 1 && key_ == Name::delta) return first_string(delta_seen_, delta_, v);
        return true;
    }
    bool Key(std::string_view key) {
        key_ = Name::other;
        if (depth_ == 1 && key == "type") key_ = Name::type;
        if (depth_ == 1 && key == "delta") key_ = Name::delta;
        return true;
    }
    bool StartObject() { return enter(); }
    bool EndObject(std::uint32_t) {
        --depth_;
        return true;
    }
    bool StartArray() { return depth_ > 0 && enter(); }  // the root must be an object
    bool EndArray(std::uint32_t) {
        --depth_;
        return true;
    }

    /// After a whole scan: whether the event is one this reader answers.
    bool finish() {
        if (!type_seen_ || !delta_seen_) return false;
        if (type_ == "response.output_text.delta") {
            out_.reasoning = false;
        } else if (type_ == "response.reasoning_summary_text.delta" ||
                   type_ == "response.reasoning_text.delta") {
            out_.reasoning = true;
        } else {
            return false;
        }
        out_.text = delta_;
        return true;
    }

  private:
    enum class Name { other, type, delta };

    bool enter() {
        // A container as the "type" or the "delta": not the shape this reads.
        if (depth_ == 1 && key_ != Name::other) return false;
        return ++depth_ <= 8;
    }
    bool scalar() const { return depth_ > 1 || (depth_ == 1 && key_ == Name::other); }

    EventJson::TextDelta& out_;
    std::size_t depth_ = 0;
    Name key_ = Name::other;
    bool type_seen_ = false, delta_seen_ = false;
    std::string_view type_, delta_;
};

/// The reader of the common Gemini chunk (EventJson::gemini_chunk). Each
/// container it enters is one of the chunk's known places or one it ignores
/// whole; a second "candidates", "usageMetadata", "content", "parts", "text"
/// or count, or one that is not what it should be, stops it, and the
/// document read decides (it takes the first of a duplicate, whatever it is).
class GeminiChunkReader {
  public:
    explicit GeminiChunkReader(EventJson::GeminiChunk& out) : out_(out) {}

    bool Null() { return scalar(); }
    bool Bool(bool b) {
        if (depth_ > 0 && place() == Place::part && key_ == Name::thought) {
            if (thought_seen_) return false;  // a duplicate, or a second part's
            thought_seen_ = true;
            thought_part_ = parts_entered_;
            out_.thought = b;
            return true;
        }
        return scalar();
    }
    bool Int64(std::int64_t v) {
        if (depth_ > 0 && place() == Place::usage && key_ != Name::other) {
            std::optional<std::int64_t>& slot = count_slot();
            if (slot) return false;  // a duplicate count
            slot = v;
            return true;
        }
        return scalar();
    }
    bool NonInteger() { return scalar(); }
    bool String(std::string_view v) {
        if (depth_ > 0 && place() == Place::candidate && key_ == Name::finish_reason)
            return first_string(out_.has_finish_reason, out_.finish_reason, v);
        if (depth_ > 0 && place() == Place::part && key_ == Name::text) {
            text_part_ = parts_entered_;
            return first_string(out_.has_text, out_.text, v);
        }
        return scalar();
    }
    bool Key(std::string_view key) {
        key_ = Name::other;
        switch (place()) {
            case Place::root:
                if (key == "error") return false;  // an error chunk: the document read's
                if (key == "candidates") key_ = Name::candidates;
                if (key == "usageMetadata") key_ = Name::usage;
                break;
            case Place::candidate:
                if (key == "content") key_ = Name::content;
                if (key == "finishReason") key_ = Name::finish_reason;
                break;
            case Place::content:
                if (key == "parts") key_ = Name::parts;
                break;
            case Place::part:
                // Signatures and calls: the document read's.
                if (key == "thoughtSignature" || key == "functionCall") return false;
                if (key == "text") key_ = Name::text;
                if (key == "thought") key_ = Name::thought;
                break;
            case Place::usage:
                if (key == "promptTokenCount") key_ = Name::prompt_count;
                if (key == "candidatesTokenCount") key_ = Name::candidates_count;
                if (key == "cachedContentTokenCount") key_ = Name::cached_count;
                if (key == "thoughtsTokenCount") key_ = Name::thoughts_count;
                break;
            default:
                break;
        }
        return true;
    }
    bool StartObject() { return enter(/*object=*/true); }
    bool EndObject(std::uint32_t) {
        --depth_;
        return true;
    }
    bool StartArray() { return enter(/*object=*/false); }
    bool EndArray(std::uint32_t) {
        --depth_;
        return true;
    }

    /// After a whole scan: a "thought" flag counts only beside the text, in
    /// its part (a document read applies each part's flag to that part).
    bool finish() const { return !thought_seen_ || (out_.has_text && thought_part_ == text_part_); }

  private:
    /// What a container is: the chunk's known places, or one ignored whole.
    enum class Place { root, candidates, candidate, content, parts, part, usage, ignored };
    enum class Name {
        other,
        candidates,
        usage,
        content,
        finish_reason,
        parts,
        text,
        thought,
        prompt_count,
        candidates_count,
        cached_count,
        thoughts_count
    };
    static constexpr std::size_t kMaxDepth = 8;

    Place place() const { return places_[depth_ - 1]; }

    bool enter(bool object) {
        if (depth_ == kMaxDepth) return false;
        Place next = Place::ignored;
        if (depth_ == 0) {
            if (!object) return false;  // the root must be an object
            next = Place::root;
        } else {
            switch (place()) {
                case Place::root:
                    if (key_ == Name::candidates) {
                        if (object || candidates_seen_) return false;
                        candidates_seen_ = true;
                        next = Place::candidates;
                    } else if (key_ == Name::usage) {
                        if (!object || usage_seen_) return false;
                        usage_seen_ = true;
                        next = Place::usage;
                    }
                    break;
                case Place::candidates:
                    // One candidate: several would concatenate their texts.
                    if (!object || candidate_seen_) return false;
                    candidate_seen_ = true;
                    next = Place::candidate;
                    break;
                case Place::candidate:
                    if (key_ == Name::content) {
                        if (!object || content_seen_) return false;
                        content_seen_ = true;
                        next = Place::content;
                    } else if (key_ == Name::finish_reason) {
                        return false;
                    }
                    break;
                case Place::content:
                    if (key_ == Name::parts) {
                        if (object || parts_seen_) return false;
                        parts_seen_ = true;
                        next = Place::parts;
                    }
                    break;
                case Place::parts:
                    if (!object) return false;
                    ++parts_entered_;
                    next = Place::part;
                    break;
                case Place::part:
                    if (key_ != Name::other) return false;  // a text or thought that is a container
                    break;
                case Place::usage:
                    if (key_ != Name::other) return false;
                    break;
                case Place::ignored:
                    break;
            }
        }
        places_[depth_++] = next;
        return true;
    }

    /// A scalar where no string or count was read: refused in a known place.
    bool scalar() const {
        if (depth_ == 0) return false;
        switch (place()) {
            case Place::root:
            case Place::candidate:
            case Place::content:
            case Place::part:
            case Place::usage:
                return key_ == Name::other;
            case Place::candidates:
            case Place::parts:
                return false;  // an element that is not an object
            case Place::ignored:
                return true;
        }
        return false;
    }

    std::optional<std::int64_t>& count_slot() {
        switch (key_) {
            case Name::prompt_count:
                return out_.input_tokens;
            case Name::candidates_count:
                return out_.output_tokens;
            case Name::cached_count:
                return out_.cached_input_tokens;
            default:
                return out_.reasoning_tokens;
        }
    }

    EventJson::GeminiChunk& out_;
    Place places_[kMaxDepth] = {};
    std::size_t depth_ = 0;
    Name key_ = Name::other;
    bool candidates_seen_ = false, candidate_seen_ = false, content_seen_ = false,
         parts_seen_ = false, usage_seen_ = false, thought_seen_ = false;
    std::size_t parts_entered_ = 0, text_part_ = 0, thought_part_ = 0;
};

}  // namespace

bool EventJson::openai_chunk(std::string_view text, OpenAIChunk& out) {
    read_by_shape_ = shape_.holes != 0 && openai_chunk_by_shape(text, out);
    if (read_by_shape_) return true;
    out = {};
    OpenAIChunkReader handler(out);
    // No copy of the chunk: the views point into `text`, or into the scratch
    // buffer for a string with an escape. The handler stops at 8 levels.
    if (!scan_strict_json(text, unescaped_, handler) || !handler.ok_) return false;
    remember_shape(text, out, handler.obfuscation_seen_, handler.obfuscation_);
    return true;
}

namespace {

/// Where `view` starts in `text` as a string token's value read in place
/// (the opening quote is one byte before it), or npos when it is not one.
std::size_t token_at(std::string_view view, std::string_view text) {
    // std::less: a view into the scratch buffer is compared with the text too.
    const std::less<const char*> before;
    if (before(view.data(), text.data() + 1) ||
        !before(view.data() + view.size(), text.data() + text.size()))
        return std::string_view::npos;
    const auto at = static_cast<std::size_t>(view.data() - text.data()) - 1;
    if (text[at] != '"' || text[at + 1 + view.size()] != '"') return std::string_view::npos;
    return at;
}

}  // namespace

void EventJson::remember_shape(std::string_view text, const OpenAIChunk& read, bool has_obfuscation,
                               std::string_view obfuscation) {
    // Only a plain token chunk, of bounded size, whose content was read in
    // place (an escaped one has no token extent here: the next chunk will do).
    if (!read.has_content || read.has_reasoning_content || read.has_reasoning ||
        read.has_finish_reason || read.has_usage || text.size() > kMaxShape)
        return;
    struct Hole {
        std::size_t at, size;
        bool content;
    };
    Hole holes[2];
    int count = 0;
    const std::size_t content_at = token_at(read.content, text);
    if (content_at == std::string_view::npos) return;
    holes[count++] = {content_at, read.content.size() + 2, true};
    const std::size_t padding_at =
        has_obfuscation ? token_at(obfuscation, text) : std::string_view::npos;
    if (padding_at != std::string_view::npos) {
        holes[count++] = {padding_at, obfuscation.size() + 2, false};
        if (holes[1].at < holes[0].at) std::swap(holes[0], holes[1]);
    }
    shape_.literal.clear();
    std::size_t from = 0;
    for (int h = 0; h < count; ++h) {
        shape_.literal.append(text.substr(from, holes[h].at - from));
        shape_.hole_at[h] = shape_.literal.size();
        if (holes[h].content) shape_.content_hole = h;
        from = holes[h].at + holes[h].size;
    }
    shape_.literal.append(text.substr(from));
    shape_.holes = count;
}

bool EventJson::openai_chunk_by_shape(std::string_view text, OpenAIChunk& out) {
    // text must be the shape's literal bytes with a string token in each
    // hole. Such a text scans as the chunk the shape was cut from did, call
    // for call, but for the holes' String() values, which the reader keeps
    // (the content) or ignores (the padding) whatever they are: so its
    // reading is that chunk's with this content. A string token's extent is
    // its own bytes' (up to the first unescaped quote), so the literal bytes
    // after it are compared where they must be.
    struct NoCalls {};
    NoCalls none;
    StrictJsonScanner<NoCalls> scanner(text, unescaped_, none);
    const char* t = text.data();
    const char* const end = t + text.size();
    const char* const literal = shape_.literal.data();
    std::size_t from = 0;
    std::string_view content;
    for (int h = 0; h < shape_.holes; ++h) {
        const std::size_t n = shape_.hole_at[h] - from;
        if (static_cast<std::size_t>(end - t) < n || std::memcmp(t, literal + from, n) != 0)
            return false;
        std::string_view value;
        if (!(t = scanner.string_token(t + n, value))) return false;
        if (h == shape_.content_hole) content = value;
        from = shape_.hole_at[h];
    }
    const std::size_t rest = shape_.literal.size() - from;
    if (static_cast<std::size_t>(end - t) != rest || std::memcmp(t, literal + from, rest) != 0)
        return false;
    out = {};
    out.has_content = true;
    out.content = content;
    return true;
}

bool EventJson::anthropic_delta(std::string_view text, std::string_view event_type,
                                TextDelta& out) {
    out = {};
    AnthropicDeltaReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish(event_type);
}

bool EventJson::responses_delta(std::string_view text, TextDelta& out) {
    out = {};
    ResponsesDeltaReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish();
}

bool EventJson::gemini_chunk(std::string_view text, GeminiChunk& out) {
    out = {};
    GeminiChunkReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish();
}

EventJson::EventJson() = default;
EventJson::~EventJson() = default;

const rapidjson::Value* EventJson::parse(std::string_view text, std::string& error) {
    if (!document_) document_ = std::make_unique<DocumentParts>();
    DocumentParts& parts = *document_;
    // Last event's values and stacks go; the first blocks (ours) stay.
    parts.document.reset();
    parts.values.Clear();
    parts.stacks.Clear();
    parts.document.emplace(&parts.values, 256, &parts.stacks);
    // A NUL inside the text would end an in-place parse early: such text is
    // not JSON anyway, and the offset says where.
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
        error = "invalid JSON at offset " + std::to_string(nul) + ": a NUL byte";
        return nullptr;
    }
    // RapidJSON's SSE2 scans read whole aligned 16-byte blocks, up to 15 bytes
    // past the terminating NUL: they must stay inside our buffer (the fuzz
    // target, under AddressSanitizer, caught the read past its end).
    parts.text.assign(text);
    parts.text.append(kScanPadding, '\0');
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, Pool> reader(&parts.stacks, 256);
    bool too_deep = false;
    rapidjson::ParseResult result;
    auto parse_into = [&](auto& handler) {
        DepthGuard<std::remove_reference_t<decltype(handler)>> guard{handler, max_depth};
        rapidjson::InsituStringStream input(parts.text.data());
        result = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseInsituFlag>(input,
                                                                                            guard);
        too_deep = guard.too_deep;
        return !result.IsError();
    };
    parts.document->Populate(parse_into);
    if (too_deep) {
        error = "JSON nested deeper than " + std::to_string(max_depth) + " levels";
        return nullptr;
    }
    if (result.IsError()) {
        error = "invalid JSON at offset " + std::to_string(result.Offset()) + ": " +
                rapidjson::GetParseError_En(result.Code());
        return nullptr;
    }
    return &*parts.document;
}

}  // namespace nous::llm::detail
