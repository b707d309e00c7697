// The reused event document: a depth guard between RapidJSON's iterative
// reader and the document that it builds.

#include "event_json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

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

}  // namespace

EventJson::EventJson()
    : values_(value_buffer_, sizeof value_buffer_), stacks_(stack_buffer_, sizeof stack_buffer_) {}

const rapidjson::Value* EventJson::parse(std::string_view text, std::string& error) {
    // Last event's values and stacks go; the first blocks (ours) stay.
    document_.reset();
    values_.Clear();
    stacks_.Clear();
    document_.emplace(&values_, 256, &stacks_);
    // A NUL inside the text would end an in-place parse early: such text is
    // not JSON anyway, and the offset says where.
    if (text.find('\0') != std::string_view::npos) {
        error = "invalid JSON at offset " + std::to_string(text.find('\0')) + ": a NUL byte";
        return nullptr;
    }
    text_.assign(text);
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, Pool> reader(&stacks_, 256);
    bool too_deep = false;
    rapidjson::ParseResult result;
    auto parse_into = [&](auto& handler) {
        DepthGuard<std::remove_reference_t<decltype(handler)>> guard{handler, max_depth};
        rapidjson::InsituStringStream input(text_.data());
        result = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseInsituFlag>(input,
                                                                                            guard);
        too_deep = guard.too_deep;
        return !result.IsError();
    };
    document_->Populate(parse_into);
    if (too_deep) {
        error = "JSON nested deeper than " + std::to_string(max_depth) + " levels";
        return nullptr;
    }
    if (result.IsError()) {
        error = "invalid JSON at offset " + std::to_string(result.Offset()) + ": " +
                rapidjson::GetParseError_En(result.Code());
        return nullptr;
    }
    return &*document_;
}

}  // namespace nous::llm::detail
