#pragma once
// Where text stops being UTF-8. Everything we send a provider is JSON, which
// is UTF-8; RapidJSON's writer copies a string's bytes as they are, so a
// caller's Latin-1 or cut text would reach the provider as a body it cannot
// parse (a 400 naming nothing). It is refused before a byte goes out instead.

#include <cstddef>
#include <optional>
#include <string_view>

namespace nous::llm::detail {

/// The offset of the first byte of `text` that does not begin a well-formed
/// UTF-8 character (RFC 3629: no overlong form, no surrogate, nothing past
/// U+10FFFF, no cut character at the end); nullopt when all of it is UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

}  // namespace nous::llm::detail
