// The reader of the common Gemini chunk, without a document, on the strict
// scanner of json_scan.hpp (event_json.hpp).

#include <functional>

#include "json/event_json.hpp"
#include "json/json_scan.hpp"

namespace nous::llm::detail {

namespace {

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
        // Another candidate than the first: the document read leaves it out.
        if (depth_ > 0 && place() == Place::candidate && key_ == Name::index) return v == 0;
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
                if (key == "error") return false;           // an error chunk: the document read's
                if (key == "promptFeedback") return false;  // a blocked prompt: likewise
                if (key == "candidates") key_ = Name::candidates;
                if (key == "usageMetadata") key_ = Name::usage;
                break;
            case Place::candidate:
                if (key == "content") key_ = Name::content;
                if (key == "finishReason") key_ = Name::finish_reason;
                if (key == "index") key_ = Name::index;
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
        index,
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

bool EventJson::gemini_chunk(std::string_view text, GeminiChunk& out) {
    out = {};
    GeminiChunkReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish();
}

}  // namespace nous::llm::detail
