#pragma once
// Small ASCII string helpers (HTTP names and tokens are ASCII).

#include <string>
#include <string_view>

namespace nous::http::detail {

/// 'A'-'Z' to 'a'-'z', every other byte as it is.
constexpr char ascii_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string to_lower(std::string_view s);
/// Equal ignoring ASCII case (no copy).
bool ascii_iequals(std::string_view a, std::string_view b) noexcept;
/// Without leading and trailing spaces and tabs (HTTP optional white space).
std::string_view trim(std::string_view s) noexcept;
/// A peer's or caller's bytes as a log line may show them: every byte
/// outside printable ASCII as '?' (a control byte forges lines).
std::string printable_ascii(std::string_view text);

namespace token_table {
/// tchar of RFC 9110 5.6.2, by byte value.
constexpr bool make(unsigned char c) noexcept {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~':
            return true;
        default:
            return false;
    }
}
struct Table {
    bool token[256];
    constexpr Table() : token() {
        for (int c = 0; c < 256; ++c) token[c] = make(static_cast<unsigned char>(c));
    }
};
inline constexpr Table table{};
}  // namespace token_table

/// A tchar of RFC 9110 5.6.2: what a header field name is made of. Inline:
/// every byte of every field name goes through it.
inline bool is_token_char(unsigned char c) noexcept { return token_table::table.token[c]; }

}  // namespace nous::http::detail
