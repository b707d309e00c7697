#pragma once
// Shared by the libFuzzer targets: split points derived from the input, so
// that each input is also fed in pieces, and piece boundaries must never
// change what comes out.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace nous::fuzz {

/// Cut points for `n` bytes, chosen by a small generator seeded from `seed`.
inline std::vector<std::size_t> cuts_for(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> cuts;
    std::uint64_t x = seed | 1;
    std::size_t pos = 0;
    while (n > 0) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pos += 1 + static_cast<std::size_t>(x % 17);
        if (pos >= n) break;
        cuts.push_back(pos);
    }
    return cuts;
}

inline std::uint64_t seed_of(std::string_view data) {
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < data.size() && i < 16; ++i)
        h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
    return h;
}

/// A property that must hold: abort() makes libFuzzer report a crash.
inline void require(bool ok) {
    if (!ok) std::abort();
}

}  // namespace nous::fuzz
