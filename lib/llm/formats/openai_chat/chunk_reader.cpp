// The reader of the common OpenAI-compatible token chunk, without a
// document, on the strict scanner of json_scan.hpp; and the chunk's shape,
// which reads a stream's repeated chunks by their bytes (event_json.hpp).

#include <functional>

#include "json/event_json.hpp"
#include "json/json_scan.hpp"

namespace nous::llm::detail {

namespace {

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
        // A refusal (structured outputs) is read by the document path.
        if (depth_ == 4 && place_ == Place::delta && key_ == "refusal") return false;
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

}  // namespace nous::llm::detail
