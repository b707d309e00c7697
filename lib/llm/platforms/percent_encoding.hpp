#pragma once
// RFC 3986 percent-encoding (nous_llm internal): every byte but the
// unreserved ones (A-Z a-z 0-9 - . _ ~) as %XX, upper case. The library's
// one encoder: SigV4's canonical request, Bedrock's model id in the path,
// Azure's api-version, Google's token forms; and its one decoder: a Redis
// URL's password, the OTEL_* header and resource lists.

#include <charconv>
#include <string>
#include <string_view>

#include "json/ascii.hpp"

namespace nous::llm::detail {

inline std::string percent_encode(std::string_view text) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    // By byte value (json/ascii.hpp): a locale's letters are not unreserved.
    for (unsigned char c : text) {
        if (ascii_alnum(static_cast<char>(c)) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

/// %XX decoded into `out`; false for a broken escape.
inline bool percent_decode(std::string_view in, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        unsigned value = 0;
        if (i + 2 >= in.size()) return false;
        auto [end, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, value, 16);
        if (ec != std::errc() || end != in.data() + i + 3) return false;
        out += static_cast<char>(value);
        i += 2;
    }
    return true;
}

}  // namespace nous::llm::detail
