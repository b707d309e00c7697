#pragma once
// Small ASCII string helpers (HTTP names and tokens are ASCII).

#include <string>
#include <string_view>

namespace nous::http::detail {

std::string to_lower(std::string_view s);
/// Without leading and trailing spaces and tabs (HTTP optional white space).
std::string_view trim(std::string_view s) noexcept;

}  // namespace nous::http::detail
