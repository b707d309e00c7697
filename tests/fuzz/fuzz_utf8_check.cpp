// libFuzzer: the UTF-8 check of what we send (lib/llm/json/utf8_check.hpp)
// held to a reference written the other way round: decode each code point,
// then refuse an overlong form, a surrogate or one past U+10FFFF by its
// value. The same offset for any bytes, and for the bytes behind any prefix
// (the fast path's sixteen-byte steps land anywhere).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "json/utf8_check.hpp"

namespace {

std::optional<std::size_t> reference(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = s[i];
        std::size_t length = c < 0x80         ? 1
                             : (c >> 5) == 6  ? 2
                             : (c >> 4) == 14 ? 3
                             : (c >> 3) == 30 ? 4
                                              : 0;
        if (length == 0 || i + length > text.size()) return i;
        std::uint32_t cp = length == 1 ? c : c & (0x7F >> length);
        for (std::size_t k = 1; k < length; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        static constexpr std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < smallest[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
        i += length;
    }
    return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    nous::fuzz::require(nous::llm::detail::first_invalid_utf8(text) == reference(text));
    // The same bytes behind a run of ASCII that puts them at every alignment.
    for (std::size_t pad = 1; pad < 17 && size < 4096; pad += 5) {
        std::string padded(pad, 'a');
        padded.append(text);
        const auto got = nous::llm::detail::first_invalid_utf8(padded);
        const auto want = reference(padded);
        nous::fuzz::require(got == want);
    }
    return 0;
}
