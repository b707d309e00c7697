// libFuzzer: the incremental JSON reader (nous/llm/partial_json.hpp) held to
// the whole-document parser on any bytes: the same verdict, the same value
// (numbers by value), whole and in pieces; and every partial value on the
// way only ever grows.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz_support.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/partial_json.hpp"

namespace {

using nous::llm::JsonValue;

bool same(const JsonValue& a, const rapidjson::Value& b) {
    switch (a.type) {
        case JsonValue::Type::null:
            return b.IsNull();
        case JsonValue::Type::boolean:
            return b.IsBool() && b.GetBool() == a.boolean;
        case JsonValue::Type::number:
            // RapidJSON's default number reading may be a few ulps off the
            // nearest double (no full-precision flag): equal within 1e-12.
            if (!b.IsNumber()) return false;
            {
                const double x = std::strtod(a.number.c_str(), nullptr), y = b.GetDouble();
                return x == y || std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
            }
        case JsonValue::Type::string:
            return b.IsString() && a.string == std::string(b.GetString(), b.GetStringLength());
        case JsonValue::Type::array:
            if (!b.IsArray() || b.Size() != a.elements.size()) return false;
            for (rapidjson::SizeType i = 0; i < b.Size(); ++i)
                if (!same(a.elements[i], b[i])) return false;
            return true;
        case JsonValue::Type::object: {
            if (!b.IsObject() || b.MemberCount() != a.members.size()) return false;
            rapidjson::SizeType i = 0;
            for (auto it = b.MemberBegin(); it != b.MemberEnd(); ++it, ++i)
                if (a.members[i].first !=
                        std::string(it->name.GetString(), it->name.GetStringLength()) ||
                    !same(a.members[i].second, it->value))
                    return false;
            return true;
        }
    }
    return false;
}

std::string growable(std::string s) {
    while (!s.empty() && (s.back() == '}' || s.back() == ']' || s.back() == '"')) s.pop_back();
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    nous::llm::PartialJson whole;
    const bool ok = whole.feed(text) && whole.finish();

    nous::llm::PartialJson pieces;
    bool pieces_ok = true;
    std::string before;
    std::size_t pos = 0;
    const auto cuts = nous::fuzz::cuts_for(size, nous::fuzz::seed_of(text));
    for (std::size_t i = 0; i <= cuts.size() && pieces_ok; ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : size;
        pieces_ok = pieces.feed(std::string_view(text).substr(pos, end - pos));
        pos = end;
        if (!pieces_ok) break;
        const std::string now = pieces.value().to_json();
        nous::fuzz::require(now.rfind(growable(before), 0) == 0);
        const bool started = pieces.complete() || pieces.value().type != JsonValue::Type::null;
        before = started ? now : "";
    }
    pieces_ok = pieces_ok && pieces.finish();
    nous::fuzz::require(ok == pieces_ok);
    if (ok) nous::fuzz::require(whole.value().to_json() == pieces.value().to_json());

    // The whole-document parser (depth-limited as ours): the same verdict
    // and value, but near the depth limit, where the two count differently.
    std::size_t opens = 0;
    for (char c : text) opens += c == '[' || c == '{';
    if (opens > 200) return 0;
    // RapidJSON reads a NUL byte as the end of the text (its streams'
    // end marker) where we refuse it: a difference of the reference's, left out.
    if (text.find('\0') != std::string::npos) return 0;
    // Nor does it read a text starting with 0xEF, 0xBB or 0xBF as we do: its
    // stream skips each of a UTF-8 byte order mark's bytes on its own.
    if (!text.empty()) {
        const auto first = static_cast<unsigned char>(text[0]);
        if (first == 0xEF || first == 0xBB || first == 0xBF) return 0;
    }
    auto doc = nous::http::parse_json(text);
    nous::fuzz::require(static_cast<bool>(doc) == ok);
    if (ok) nous::fuzz::require(same(whole.value(), *doc.value()));
    return 0;
}
