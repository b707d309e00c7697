// The reader of the common Anthropic token event (a text or reasoning
// fragment), without a document, on the strict scanner of json/json_scan.hpp
// (json/event_json.hpp).

#include <functional>

#include "json/event_json.hpp"
#include "json/json_scan.hpp"

namespace nous::llm::detail {

namespace {

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

}  // namespace

bool EventJson::anthropic_delta(std::string_view text, std::string_view event_type,
                                TextDelta& out) {
    out = {};
    AnthropicDeltaReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish(event_type);
}

}  // namespace nous::llm::detail
