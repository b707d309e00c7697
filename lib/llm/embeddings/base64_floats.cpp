// base64 embeddings: the float32 rows a base64 string holds, decoded
// straight into the matrix (base64_floats.hpp).

#include "embeddings/base64_floats.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "embeddings/cpu_features.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nous::llm::detail {

namespace {

/// base64's alphabet (standard, as OpenAI sends it): the 6-bit value of each
/// byte, 0x80 for any byte outside it.
constexpr std::array<std::uint8_t, 256> kBase64 = [] {
    std::array<std::uint8_t, 256> t{};
    t.fill(0x80);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::uint8_t i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
}();

std::string_view without_padding(std::string_view text) noexcept {
    if (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (!text.empty() && text.back() == '=') text.remove_suffix(1);
    return text;
}

}  // namespace

bool base64_float_count(std::string_view text, std::size_t& count) noexcept {
    const std::size_t chars = without_padding(text).size();
    if (chars % 4 == 1) return false;
    const std::size_t bytes = chars / 4 * 3 + (chars % 4 == 0 ? 0 : chars % 4 - 1);
    if (bytes % sizeof(float) != 0) return false;
    count = bytes / sizeof(float);
    return true;
}

namespace {

/// Whole quads of base64 at `in` into 3 bytes each at `bytes`, one at a time;
/// the high bit of the result: a byte outside the alphabet.
std::uint8_t decode_quads(const unsigned char*& in, unsigned char*& bytes,
                          std::size_t quads) noexcept {
    std::uint8_t bad = 0;  // any byte outside the alphabet sets its high bit
    for (std::size_t i = 0; i < quads; ++i, in += 4, bytes += 3) {
        const std::uint8_t a = kBase64[in[0]], b = kBase64[in[1]], c = kBase64[in[2]],
                           d = kBase64[in[3]];
        bad |= a | b | c | d;
        const std::uint32_t v = (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) |
                                (std::uint32_t{c} << 6) | std::uint32_t{d};
        bytes[0] = static_cast<unsigned char>(v >> 16);
        bytes[1] = static_cast<unsigned char>(v >> 8);
        bytes[2] = static_cast<unsigned char>(v);
    }
    return bad;
}

#if defined(__x86_64__)
/// 32 characters into 24 bytes at a time with AVX2 (the nibble-lookup
/// method of Muła and Lemire, "Faster Base64 Encoding and Decoding Using
/// AVX2 Instructions", 2018): classify each byte by its two nibbles, add the
/// offset its range needs, then pack four 6-bit values into three bytes.
/// Stops while at least 32 bytes of output room are left (each store writes
/// 32); false: a byte outside the alphabet.
__attribute__((target("avx2"))) bool decode_blocks_avx2(const unsigned char*& in,
                                                        unsigned char*& bytes,
                                                        std::size_t& quads) noexcept {
    const __m256i lut_lo =
        _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A,
                         0x1B, 0x1B, 0x1B, 0x1A, 0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                         0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A);
    const __m256i lut_hi =
        _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10,
                         0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08,
                         0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
    const __m256i lut_roll =
        _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 19, 4,
                         -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i slash = _mm256_set1_epi8(0x2f);
    const __m256i pack_pairs = _mm256_set1_epi32(0x01400140);
    const __m256i pack_quads = _mm256_set1_epi32(0x00011000);
    const __m256i to_bytes =
        _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6, 5, 4,
                         10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i lanes_together = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    // 8 quads a block; the last store must stay inside the output: one more block's room.
    while (quads >= 8 + 3) {
        const __m256i text = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
        const __m256i hi_nibbles = _mm256_and_si256(_mm256_srli_epi32(text, 4), nibble);
        const __m256i lo_nibbles = _mm256_and_si256(text, nibble);
        const __m256i hi = _mm256_shuffle_epi8(lut_hi, hi_nibbles);
        const __m256i lo = _mm256_shuffle_epi8(lut_lo, lo_nibbles);
        if (!_mm256_testz_si256(lo, hi)) return false;
        const __m256i is_slash = _mm256_cmpeq_epi8(text, slash);
        const __m256i roll = _mm256_shuffle_epi8(lut_roll, _mm256_add_epi8(is_slash, hi_nibbles));
        const __m256i sextets = _mm256_add_epi8(text, roll);
        const __m256i pairs = _mm256_maddubs_epi16(sextets, pack_pairs);
        const __m256i words = _mm256_madd_epi16(pairs, pack_quads);
        const __m256i packed =
            _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(words, to_bytes), lanes_together);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(bytes), packed);
        in += 32;
        bytes += 24;
        quads -= 8;
    }
    return true;
}

/// Whether any of the first count - count % 8 values is a NaN or an
/// infinity (its exponent bits all ones), eight at a time: GCC at -O2 left
/// the scalar loop one value a step, twice the decode's own time.
__attribute__((target("avx2"))) bool non_finite_blocks_avx2(const float* values,
                                                            std::size_t count) noexcept {
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    __m256i seen = _mm256_setzero_si256();
    for (std::size_t i = 0; i + 8 <= count; i += 8) {
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + i));
        seen =
            _mm256_or_si256(seen, _mm256_cmpeq_epi32(_mm256_and_si256(bits, exponent), exponent));
    }
    return !_mm256_testz_si256(seen, seen);
}

#endif

/// A NaN or an infinity among `count` values: a broken vector, never a
/// value to rank by. Integer compares on the bits.
bool has_non_finite(const float* values, std::size_t count, bool simd) noexcept {
    std::size_t from = 0;
#if defined(__x86_64__)
    if (simd && has_avx2()) {
        if (non_finite_blocks_avx2(values, count)) return true;
        from = count - count % 8;
    }
#else
    (void)simd;
#endif
    std::uint32_t non_finite = 0;
    for (std::size_t i = from; i < count; ++i) {
        std::uint32_t u;
        std::memcpy(&u, values + i, sizeof u);
        non_finite |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
    }
    return non_finite != 0;
}

bool decode_base64_floats_with(std::string_view text, float* out, bool simd) noexcept {
    text = without_padding(text);
    auto* bytes = reinterpret_cast<unsigned char*>(out);
    const auto* in = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t quads = text.size() / 4;
#if defined(__x86_64__)
    if (simd && has_avx2() && !decode_blocks_avx2(in, bytes, quads)) return false;
#else
    (void)simd;
#endif
    std::uint8_t bad = decode_quads(in, bytes, quads);
    const std::size_t rest = text.size() % 4;  // 2 or 3 characters: 1 or 2 bytes
    if (rest >= 2) {
        const std::uint8_t a = kBase64[in[0]], b = kBase64[in[1]],
                           c = rest == 3 ? kBase64[in[2]] : std::uint8_t{0};
        bad |= a | b | c;
        const std::uint32_t v =
            (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) | (std::uint32_t{c} << 6);
        bytes[0] = static_cast<unsigned char>(v >> 16);
        if (rest == 3) bytes[1] = static_cast<unsigned char>(v >> 8);
    }
    if (bad & 0x80) return false;
    std::size_t count = 0;
    base64_float_count(text, count);
    if constexpr (std::endian::native == std::endian::big) {
        for (std::size_t i = 0; i < count; ++i) {
            std::uint32_t u;
            std::memcpy(&u, out + i, sizeof u);
            u = __builtin_bswap32(u);
            std::memcpy(out + i, &u, sizeof u);
        }
    }
    return !has_non_finite(out, count, simd);
}

}  // namespace

bool decode_base64_floats(std::string_view text, float* out) noexcept {
    return decode_base64_floats_with(text, out, true);
}

bool decode_base64_floats_portable(std::string_view text, float* out) noexcept {
    return decode_base64_floats_with(text, out, false);
}

bool unescape_base64(std::string_view raw, std::string& out) {
    out.clear();
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '\\') {
            out.push_back(raw[i]);
            continue;
        }
        if (i + 1 >= raw.size()) return false;
        const char e = raw[++i];
        if (e == '/') {
            out.push_back('/');
        } else if (e == 'u' && i + 4 < raw.size() && raw.substr(i + 1, 2) == "00") {
            unsigned value = 0;
            auto [ptr, ec] = std::from_chars(raw.data() + i + 3, raw.data() + i + 5, value, 16);
            if (ec != std::errc() || ptr != raw.data() + i + 5 || value >= 0x80) return false;
            out.push_back(static_cast<char>(value));
            i += 4;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace nous::llm::detail
