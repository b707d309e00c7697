// The reused event document: a depth guard between RapidJSON's iterative
// reader and the document that it builds. The fast readers of the common
// token events are each format's own: formats/openai_chat/chunk_reader.cpp,
// formats/{anthropic,openai_responses}/delta_reader.cpp,
// formats/gemini/chunk_reader.cpp.

// SIMD string and whitespace scanning for the in-place parses of this file
// (x86-64 always has SSE2). Only this file parses in place, so no other
// translation unit instantiates these reader paths without it.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif

#include "json/event_json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <functional>

#include "json/json_scan.hpp"

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
