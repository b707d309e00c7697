// The reader of the common Responses API token event (a text or reasoning
// fragment), without a document, on the strict scanner of json/json_scan.hpp
// (json/event_json.hpp).

#include <functional>

#include "json/event_json.hpp"
#include "json/json_scan.hpp"

namespace nous::llm::detail {

namespace {

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

}  // namespace

bool EventJson::responses_delta(std::string_view text, TextDelta& out) {
    out = {};
    ResponsesDeltaReader handler(out);
    return scan_strict_json(text, unescaped_, handler) && handler.finish();
}

}  // namespace nous::llm::detail
