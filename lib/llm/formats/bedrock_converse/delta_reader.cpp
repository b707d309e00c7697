// The reader of the common Bedrock Converse token event (a contentBlockDelta
// whose delta is text), without a document, on the strict scanner of
// json/json_scan.hpp (json/event_json.hpp).

#include "json/event_json.hpp"
#include "json/json_scan.hpp"

namespace nous::llm::detail {

namespace {

/// {"contentBlockIndex":N,"delta":{"text":"..."},"p":"..."}: the root's
/// other members are read past; the delta must hold its one "text" string
/// and nothing else (a tool call's input, reasoning, a citation: the
/// document read decides).
class ConverseDeltaReader {
  public:
    bool Null() { return outside_delta(); }
    bool Bool(bool) { return outside_delta(); }
    bool Int64(std::int64_t) { return outside_delta(); }
    bool NonInteger() { return outside_delta(); }
    bool String(std::string_view v) {
        if (depth_ == 1 && key_ == Name::delta) return false;  // a delta that is not an object
        if (depth_ == 2 && in_delta_) {
            if (key_ != Name::text || text_seen_) return false;
            text_seen_ = true;
            text_ = v;
            return true;
        }
        return depth_ > 0;
    }
    bool Key(std::string_view key) {
        key_ = Name::other;
        if (depth_ == 1 && key == "delta") key_ = Name::delta;
        if (depth_ == 2 && in_delta_) {
            if (key != "text") return false;  // anything but text: the document's
            key_ = Name::text;
        }
        return true;
    }
    bool StartObject() {
        const std::size_t at = depth_++;
        if (depth_ > 8) return false;
        if (at == 0) return true;
        if (at == 1 && key_ == Name::delta) {
            if (delta_seen_) return false;
            delta_seen_ = in_delta_ = true;
            return true;
        }
        return !(at == 2 && in_delta_);
    }
    bool EndObject(std::uint32_t) {
        if (--depth_ == 1) in_delta_ = false;
        return true;
    }
    bool StartArray() {
        const std::size_t at = depth_++;
        if (depth_ > 8 || at == 0) return false;
        return !(at == 1 && key_ == Name::delta) && !(at == 2 && in_delta_);
    }
    bool EndArray(std::uint32_t) {
        --depth_;
        return true;
    }
    bool finish(EventJson::TextDelta& out) const {
        if (!text_seen_) return false;
        out.reasoning = false;
        out.text = text_;
        return true;
    }

  private:
    enum class Name { other, delta, text };
    bool outside_delta() const {
        if (depth_ == 0) return false;
        if (depth_ == 1) return key_ != Name::delta;
        return !(depth_ == 2 && in_delta_);
    }
    std::size_t depth_ = 0;
    Name key_ = Name::other;
    bool in_delta_ = false, delta_seen_ = false, text_seen_ = false;
    std::string_view text_;
};

}  // namespace

bool EventJson::converse_delta(std::string_view text, std::string_view event_type, TextDelta& out) {
    out = {};
    if (event_type != "contentBlockDelta") return false;
    ConverseDeltaReader handler;
    return scan_strict_json(text, unescaped_, handler) && handler.finish(out);
}

}  // namespace nous::llm::detail
