#pragma once
// ASCII classes by byte value, for every lib/llm concern. std::isalnum() and
// std::tolower() follow the C locale, which an application may change: in a
// Latin-1 locale isalnum(0xE9) is true and tolower(0xC9) is 0xE9. What we
// test against is a wire rule (RFC 3986's unreserved bytes, SigV4's
// lower-case header names, a provider's tool-name pattern), ASCII whatever
// the locale is. And the one way an error message quotes a caller's name.

#include <string>
#include <string_view>

namespace nous::llm::detail {

constexpr bool ascii_letter(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
constexpr bool ascii_alnum(char c) noexcept { return ascii_letter(c) || (c >= '0' && c <= '9'); }
constexpr char ascii_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
/// `text` with 'A'-'Z' lowered, every other byte as it is.
inline std::string ascii_lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = ascii_lower(c);
    return out;
}

/// `text` in quotes when every byte is printable ASCII, else `otherwise`: a
/// control byte in an error message forges log lines.
inline std::string quoted_if_printable(std::string_view text, std::string_view otherwise) {
    for (char c : text)
        if (c < 0x20 || c >= 0x7F) return std::string(otherwise);
    return "'" + std::string(text) + "'";
}

}  // namespace nous::llm::detail
