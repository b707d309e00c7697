#pragma once
// Every parse of bytes a server sent goes through here: RapidJSON's default
// parser recurses once per nesting level without a limit, so 200 KB of `[`
// overflows the stack. The text is scanned for its nesting depth first (one
// linear pass, strings and escapes skipped) and refused past the limit.

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "core/limits.hpp"

namespace nous::http::detail {

using limits::max_json_depth;

/// True when no object or array in `text` nests deeper than `max_depth`.
/// Does not validate anything else.
bool json_depth_within(std::string_view text, std::size_t max_depth = max_json_depth) noexcept;

/// Parses `text` into `doc` (which may be a rapidjson::Document of any
/// allocator); false with `why` set on a parse error or excessive depth.
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
    return true;
}

}  // namespace nous::http::detail
