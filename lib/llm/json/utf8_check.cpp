// The UTF-8 check of what we send (utf8_check.hpp): ASCII, most of a
// request, sixteen bytes a step; the rest by the table of RFC 3629 section 4.

#include "json/utf8_check.hpp"

#include <cstdint>
#include <cstring>

namespace nous::llm::detail {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        if (i + 16 <= n) {
            std::uint64_t words[2];
            std::memcpy(words, s + i, 16);
            if (((words[0] | words[1]) & 0x8080808080808080ull) == 0) {
                i += 16;
                continue;
            }
        }
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        // The lead byte fixes the length and the range of the second byte.
        std::size_t length;
        unsigned char low = 0x80, high = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            length = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            length = 3;
            if (c == 0xE0) low = 0xA0;   // no overlong form
            if (c == 0xED) high = 0x9F;  // no surrogate
        } else if (c >= 0xF0 && c <= 0xF4) {
            length = 4;
            if (c == 0xF0) low = 0x90;   // no overlong form
            if (c == 0xF4) high = 0x8F;  // nothing past U+10FFFF
        } else {
            return i;  // a continuation byte, an overlong lead (C0, C1) or F5..FF
        }
        if (i + length > n || s[i + 1] < low || s[i + 1] > high) return i;
        for (std::size_t k = 2; k < length; ++k)
            if ((s[i + k] & 0xC0) != 0x80) return i;
        i += length;
    }
    return std::nullopt;
}

}  // namespace nous::llm::detail
