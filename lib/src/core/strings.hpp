#pragma once
// Small ASCII string helpers (HTTP names and tokens are ASCII).

#include <string>
#include <string_view>

namespace nous::http::detail {

std::string to_lower(std::string_view s);
/// Equal ignoring ASCII case (no copy).
bool ascii_iequals(std::string_view a, std::string_view b) noexcept;
/// Without leading and trailing spaces and tabs (HTTP optional white space).
std::string_view trim(std::string_view s) noexcept;

/// A tchar of RFC 9110 5.6.2: what a header field name is made of.
bool is_token_char(unsigned char c) noexcept;

}  // namespace nous::http::detail
