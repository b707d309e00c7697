// The JSON cursor and the float reader of an embeddings response (vector_json.hpp).

#include "embeddings/vector_json.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "embeddings/cpu_features.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nous::llm::detail {

namespace {

constexpr int kMaxDepth = 64;

#if defined(__x86_64__)
/// Any byte below 0x20 among the whole 32-byte blocks from `p`, which
/// advances past them.
__attribute__((target("avx2"))) bool control_byte_blocks_avx2(const char*& p,
                                                              const char* end) noexcept {
    const __m256i below_space = _mm256_set1_epi8(0x1f);
    __m256i seen = _mm256_setzero_si256();
    for (; end - p >= 32; p += 32) {
        const __m256i text = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        // x <= 0x1f (unsigned) exactly when max(x, 0x1f) is 0x1f.
        seen = _mm256_or_si256(seen,
                               _mm256_cmpeq_epi8(_mm256_max_epu8(text, below_space), below_space));
    }
    return !_mm256_testz_si256(seen, seen);
}
#endif

/// Any byte below 0x20 in [p, end), with no branch per byte (a base64
/// vector is kilobytes of string): 32 bytes a step with AVX2 (the SWAR loop
/// alone, eight a step, was a third of a base64 response's decode), eight
/// for the rest.
bool has_control_byte(const char* p, const char* end) noexcept {
#if defined(__x86_64__)
    if (has_avx2() && control_byte_blocks_avx2(p, end)) return true;
#endif
    constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    std::uint64_t found = 0;
    for (; end - p >= 8; p += 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        found |= (w - ones * 0x20) & ~w & highs;  // a byte below 0x20 sets its high bit
    }
    for (; p != end; ++p) found |= static_cast<unsigned char>(*p) < 0x20;
    return found != 0;
}

bool is_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// Past a JSON number's grammar at `p` ('-'? int frac? exp?), or nullptr.
const char* number_end(const char* p, const char* end) noexcept {
    if (p != end && *p == '-') ++p;
    if (p == end) return nullptr;
    if (*p == '0') {
        ++p;
    } else if (*p >= '1' && *p <= '9') {
        while (p != end && is_digit(*p)) ++p;
    } else {
        return nullptr;
    }
    if (p != end && *p == '.') {
        ++p;
        if (p == end || !is_digit(*p)) return nullptr;
        while (p != end && is_digit(*p)) ++p;
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
        ++p;
        if (p != end && (*p == '+' || *p == '-')) ++p;
        if (p == end || !is_digit(*p)) return nullptr;
        while (p != end && is_digit(*p)) ++p;
    }
    return p;
}

}  // namespace

char JsonCursor::peek() noexcept {
    while (p_ != end_ && is_space(*p_)) ++p_;
    return p_ == end_ ? 0 : *p_;
}

bool JsonCursor::eat(char c) noexcept {
    if (peek() != c || p_ == end_) return false;
    ++p_;
    return true;
}

bool JsonCursor::string(std::string_view& raw, bool& escaped) noexcept {
    if (!eat('"')) return false;
    const char* start = p_;
    escaped = false;
    // The common case, a string with no escape (a base64 vector, a key): one
    // memchr to its closing quote, one to see it holds no backslash.
    const void* quote = std::memchr(p_, '"', static_cast<std::size_t>(end_ - p_));
    if (!quote) return false;
    const char* q = static_cast<const char*>(quote);
    if (!std::memchr(start, '\\', static_cast<std::size_t>(q - start))) {
        if (has_control_byte(start, q)) return false;
        raw = std::string_view(start, static_cast<std::size_t>(q - start));
        p_ = q + 1;
        return true;
    }
    escaped = true;
    for (const char* c = start; c != end_; ++c) {
        if (*c == '"') {
            raw = std::string_view(start, static_cast<std::size_t>(c - start));
            p_ = c + 1;
            return true;
        }
        if (static_cast<unsigned char>(*c) < 0x20) return false;
        if (*c == '\\') {
            if (++c == end_) return false;
            if (*c == 'u') {
                for (int i = 0; i < 4; ++i)
                    if (++c == end_ || !std::isxdigit(static_cast<unsigned char>(*c))) return false;
            } else if (!std::strchr("\"\\/bfnrt", *c) || *c == 0) {
                return false;
            }
        }
    }
    return false;
}

bool JsonCursor::integer(std::int64_t& value) noexcept {
    peek();
    const char* e = number_end(p_, end_);
    if (!e) return false;
    auto [ptr, ec] = std::from_chars(p_, e, value);
    if (ec != std::errc() || ptr != e) return false;
    p_ = e;
    return true;
}

bool JsonCursor::skip(int depth) noexcept {
    if (depth > kMaxDepth) return false;
    switch (peek()) {
        case '{':
            return object([&](std::string_view) { return skip(depth + 1); });
        case '[':
            return array([&] { return skip(depth + 1); });
        case '"': {
            std::string_view raw;
            bool escaped = false;
            return string(raw, escaped);
        }
        case 't':
        case 'f':
        case 'n': {
            for (std::string_view word : {"true", "false", "null"})
                if (static_cast<std::size_t>(end_ - p_) >= word.size() &&
                    std::string_view(p_, word.size()) == word) {
                    p_ += word.size();
                    return true;
                }
            return false;
        }
        default: {
            const char* e = number_end(p_, end_);
            if (!e) return false;
            p_ = e;
            return true;
        }
    }
}

bool JsonCursor::floats(float* out, std::size_t max, std::size_t& count) noexcept {
    count = 0;
    if (!eat('[')) return false;
    if (eat(']')) return true;
    for (;;) {
        if (count == max) return false;  // more values than the row holds
        peek();
        const char* e = parse_json_float(p_, end_, out[count]);
        if (!e) return false;
        p_ = e;
        ++count;
        // The common separator with no whitespace, without peek()'s loop.
        if (p_ != end_ && *p_ == ',') {
            ++p_;
            continue;
        }
        if (eat(',')) continue;
        return eat(']');
    }
}

bool JsonCursor::floats(std::vector<float>& out) {
    out.clear();
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
        float value = 0;
        peek();
        const char* e = parse_json_float(p_, end_, value);
        if (!e) return false;
        p_ = e;
        out.push_back(value);
    } while (eat(','));
    return eat(']');
}

namespace {

/// The exact powers of ten a double holds (10^22 is the last).
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/// Whether the 8 bytes at `p` are all ASCII digits (read little-endian).
bool eight_digits(std::uint64_t v) noexcept {
    return ((v & 0xF0F0F0F0F0F0F0F0ull) |
            (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull;
}

/// The value of 8 ASCII digits read little-endian, three multiplications
/// instead of eight steps (the SWAR reading fast_float and simdjson use).
std::uint64_t eight_digits_value(std::uint64_t v) noexcept {
    v = (v & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
    v = (v & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
    return (v & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

/// Whether a JSON number token (grammar already checked) is below 1 in
/// magnitude, by its decimal exponent alone: for a number past a double's
/// range, which from_chars cannot tell too small from too large.
bool below_one(const char* p, const char* e) noexcept {
    if (p != e && *p == '-') ++p;
    long long magnitude = 0;  // the power of ten of the first significant digit
    bool significant = false;
    for (; p != e && *p != '.' && *p != 'e' && *p != 'E'; ++p)
        if (significant || *p != '0') {
            magnitude += significant;
            significant = true;
        }
    if (p != e && *p == '.')
        for (++p; p != e && *p != 'e' && *p != 'E'; ++p) {
            if (significant) continue;
            --magnitude;
            significant = *p != '0';
        }
    if (!significant) return true;  // zero
    long long exponent = 0;
    if (p != e) {
        ++p;
        const bool minus = p != e && *p == '-';
        if (p != e && (*p == '-' || *p == '+')) ++p;
        // Saturated: a number reaching here is 1e300 or more away from 1.
        for (; p != e && exponent < 1'000'000'000; ++p) exponent = exponent * 10 + (*p - '0');
        if (minus) exponent = -exponent;
    }
    return magnitude + exponent < 0;
}

/// The general reading: std::from_chars, the float nearest the decimal.
const char* parse_float_slow(const char* p, const char* e, float& out) noexcept {
    auto [ptr, ec] = std::from_chars(p, e, out);
    if (ec == std::errc::result_out_of_range) {
        // Too small for a float is its nearest float (0 or subnormal), as a
        // decimal rounds; too large has none: not a value a float can hold.
        double wide = 0;
        auto [wide_ptr, wide_ec] = std::from_chars(p, e, wide);
        if (wide_ec == std::errc::result_out_of_range && wide_ptr == e && below_one(p, e)) {
            out = *p == '-' ? -0.0f : 0.0f;  // below a double's range too (1e-400): 0
            return e;
        }
        if (wide_ec != std::errc() || wide_ptr != e ||
            std::fabs(wide) >= static_cast<double>(std::numeric_limits<float>::max()))
            return nullptr;
        out = static_cast<float>(wide);
        return e;
    }
    if (ec != std::errc() || ptr != e) return nullptr;
    return e;
}

}  // namespace

const char* parse_json_float(const char* p, const char* end, float& out) noexcept {
    // One pass that checks the grammar and gathers the digits; the value of an
    // embedding's usual number (up to 19 significant digits, a small exponent)
    // then comes from one double operation, and std::from_chars reads the rest.
    const char* start = p;
    const bool negative = p != end && *p == '-';
    if (negative) ++p;
    if (p == end) return nullptr;
    std::uint64_t digits = 0;  // the significant digits, at most 19 of them
    int kept = 0;              // how many digits `digits` holds (leading zeros not counted)
    int exponent = 0;          // the value is digits x 10^exponent
    bool dropped = false;      // a nonzero digit past the 19th: not exact
    auto take = [&](char c, bool fraction) {
        if (kept < 19) {
            digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
            kept += digits != 0;
            exponent -= fraction;
        } else {
            dropped |= c != '0';
            exponent += !fraction;
        }
    };
    if (*p == '0') {
        ++p;
    } else if (*p >= '1' && *p <= '9') {
        while (p != end && is_digit(*p)) take(*p++, false);
    } else {
        return nullptr;
    }
    if (p != end && *p == '.') {
        if (++p == end || !is_digit(*p)) return nullptr;
        if (digits == 0)  // 0.0123: the zeros before the first significant digit
            while (p != end && *p == '0') take(*p++, true);
        // An embedding's fraction is 8 or 9 digits: 8 of them at once.
        if constexpr (std::endian::native == std::endian::little) {
            std::uint64_t chunk = 0;
            while (end - p >= 8 && kept + 8 <= 19 &&
                   (std::memcpy(&chunk, p, 8), eight_digits(chunk))) {
                digits = digits * 100000000 + eight_digits_value(chunk);
                kept += digits != 0 ? 8 : 0;
                exponent -= 8;
                p += 8;
            }
        }
        while (p != end && is_digit(*p)) take(*p++, true);
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
        ++p;
        const bool minus = p != end && *p == '-';
        if (p != end && (*p == '+' || *p == '-')) ++p;
        if (p == end || !is_digit(*p)) return nullptr;
        int written = 0;
        while (p != end && is_digit(*p)) {
            if (written < 100000) written = written * 10 + (*p - '0');
            ++p;
        }
        exponent += minus ? -written : written;
    }
    // Exact inputs to one correctly rounded double: `digits` below 2^53 and a
    // power of ten a double holds exactly (Clinger's fast path).
    if (!dropped && digits <= (std::uint64_t{1} << 53) && exponent >= -22 && exponent <= 22) {
        const double wide = exponent < 0 ? static_cast<double>(digits) / kPowersOfTen[-exponent]
                                         : static_cast<double>(digits) * kPowersOfTen[exponent];
        // That double rounds to the float nearest the decimal unless it sits
        // exactly halfway between two floats (the 29 bits a float drops are
        // 1000...0), where the decimal's own side decides; and only among
        // normal floats, whose 24 bits of precision that rule counts on.
        const std::uint64_t bits = std::bit_cast<std::uint64_t>(wide);
        const bool halfway = (bits & 0x1FFFFFFFull) == 0x10000000ull;
        const bool normal =
            wide == 0 || (wide >= static_cast<double>(std::numeric_limits<float>::min()) &&
                          wide <= static_cast<double>(std::numeric_limits<float>::max()));
        if (!halfway && normal) {
            const float value = static_cast<float>(wide);
            out = negative ? -value : value;
            return p;
        }
    }
    return parse_float_slow(start, p, out);
}

}  // namespace nous::llm::detail
