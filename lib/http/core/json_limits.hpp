#pragma once
// Every parse of bytes a server sent goes through here: RapidJSON's default
// parser recurses once per nesting level without a limit, so 200 KB of `[`
// overflows the stack. The text is scanned for its nesting depth first (one
// linear pass, strings and escapes skipped) and refused past the limit.

#include <rapidjson/document.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/limits.hpp"

namespace nous::http::detail {

using limits::max_json_depth;

/// True when no object or array in `text` nests deeper than `max_depth`.
/// Does not validate anything else.
bool json_depth_within(std::string_view text, std::size_t max_depth = max_json_depth) noexcept;

/// True when every number in `value` is finite. RapidJSON 1.1 reads a number
/// past the double range ("1e308" is in range, "1.8e308" is not) as infinity
/// without an error, and its Writer cannot write infinity back: it stops
/// mid-document, so a value read from a server and sent on would go out as
/// broken JSON. Call only on a value whose depth was checked (it recurses).
template <typename Value>
bool numbers_finite(const Value& value) noexcept {
    if (value.IsDouble()) return std::isfinite(value.GetDouble());
    if (value.IsArray()) {
        for (const auto& element : value.GetArray())
            if (!numbers_finite(element)) return false;
    } else if (value.IsObject()) {
        for (const auto& member : value.GetObject())
            if (!numbers_finite(member.value)) return false;
    }
    return true;
}

/// What a document holding an infinite number is refused with.
inline constexpr const char* kNumberOutOfRange = "a JSON number outside the range of a double";

/// Parses `text` into `doc` (which may be a rapidjson::Document of any
/// allocator); false with `why` set on a parse error, excessive depth or an
/// infinite number.
template <typename Doc>
bool parse_json_limited(Doc& doc, std::string_view text, std::string* why = nullptr) {
    if (!json_depth_within(text)) {
        if (why) *why = "JSON nested deeper than " + std::to_string(max_json_depth) + " levels";
        return false;
    }
    doc.Parse(text.data(), text.size());
    if (doc.HasParseError()) {
        if (why) *why = "invalid JSON at offset " + std::to_string(doc.GetErrorOffset());
        return false;
    }
    if (!numbers_finite(doc)) {
        if (why) *why = kNumberOutOfRange;
        return false;
    }
    return true;
}

}  // namespace nous::http::detail
