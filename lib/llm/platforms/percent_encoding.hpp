#pragma once
// RFC 3986 percent-encoding (nous_llm internal): every byte but the
// unreserved ones (A-Z a-z 0-9 - . _ ~) as %XX, upper case. The platforms'
// one encoder: SigV4's canonical request, Bedrock's model id in the path,
// Azure's api-version, Google's token forms.

#include <cctype>
#include <string>
#include <string_view>

namespace nous::llm::detail {

inline std::string percent_encode(std::string_view text) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

}  // namespace nous::llm::detail
