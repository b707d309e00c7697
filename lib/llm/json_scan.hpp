#pragma once
// A strict JSON scanner (nous_llm internal) that drives a SAX handler over
// text it neither copies nor changes: the reader of the common OpenAI chunk
// runs on it, once per streamed token.
//
// It reads a subset of JSON on which RapidJSON 1.1's default reader makes
// the same handler calls in the same order: objects, arrays, strings with
// every escape but an unpaired surrogate, true, false, null, integers of up
// to 18 digits, and numbers with a fraction but no exponent. Anything else,
// malformed or merely outside the subset (an exponent, a longer integer, a
// lone surrogate escape, a control byte, a NUL, bytes after the root), and a
// handler that returns false, make scan() return false; the caller then
// reads the text with the general parser, so the subset costs only speed,
// never a different answer. tests/fuzz/fuzz_json_scan.cpp holds the two
// readers to that on any bytes.
//
// Why not RapidJSON's own reader: it scans a NUL-terminated, padded buffer
// (the chunk copied per token) and validates and copies every string; this
// hands out views into the text itself, and unescapes only strings that
// have an escape (into `scratch`, at the string's own offset: a JSON escape
// never decodes longer than it is written, so the views never overlap).
//
// The handler's calls: Null(), Bool(b), Int64(v) for every integer,
// NonInteger() for a number with a fraction (its value is not read),
// String(view), Key(view), StartObject(), EndObject(members), StartArray(),
// EndArray(elements); each returns false to stop.

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace nous::llm::detail {

template <typename Handler>
class StrictJsonScanner {
  public:
    /// Nesting the scanner itself allows (a handler may stop earlier).
    static constexpr int max_depth = 64;

    StrictJsonScanner(std::string_view text, std::string& scratch, Handler& handler)
        : begin_(text.data()),
          p_(text.data()),
          end_(text.data() + text.size()),
          scratch_(scratch),
          handler_(handler) {}

    /// True when the whole text is one value of the subset and the handler took every call.
    bool scan() {
        skip_space();
        if (!value(0)) return false;
        skip_space();
        return p_ == end_;
    }

  private:
    // value() is inlined into the object and array loops, so that a member
    // that is a string, number or literal costs no call; only a nested
    // container recurses (through object() or array()).
    [[gnu::always_inline]] bool value(int depth) {
        if (p_ == end_) return false;
        switch (*p_) {
            case '{':
                return object(depth + 1);
            case '[':
                return array(depth + 1);
            case '"': {
                std::string_view s;
                return string(s) && handler_.String(s);
            }
            case 't':
                return literal("true") && handler_.Bool(true);
            case 'f':
                return literal("false") && handler_.Bool(false);
            case 'n':
                return literal("null") && handler_.Null();
            default:
                return number();
        }
    }

    [[gnu::noinline]] bool object(int depth) {
        if (depth > max_depth) return false;
        ++p_;  // '{'
        if (!handler_.StartObject()) return false;
        skip_space();
        std::uint32_t members = 0;
        if (p_ != end_ && *p_ == '}') {
            ++p_;
            return handler_.EndObject(members);
        }
        for (;;) {
            std::string_view key;
            if (p_ == end_ || *p_ != '"' || !string(key) || !handler_.Key(key)) return false;
            skip_space();
            if (p_ == end_ || *p_ != ':') return false;
            ++p_;
            skip_space();
            if (!value(depth)) return false;
            ++members;
            skip_space();
            if (p_ == end_) return false;
            if (*p_ == '}') {
                ++p_;
                return handler_.EndObject(members);
            }
            if (*p_ != ',') return false;
            ++p_;
            skip_space();
        }
    }

    [[gnu::noinline]] bool array(int depth) {
        if (depth > max_depth) return false;
        ++p_;  // '['
        if (!handler_.StartArray()) return false;
        skip_space();
        std::uint32_t elements = 0;
        if (p_ != end_ && *p_ == ']') {
            ++p_;
            return handler_.EndArray(elements);
        }
        for (;;) {
            if (!value(depth)) return false;
            ++elements;
            skip_space();
            if (p_ == end_) return false;
            if (*p_ == ']') {
                ++p_;
                return handler_.EndArray(elements);
            }
            if (*p_ != ',') return false;
            ++p_;
            skip_space();
        }
    }

    void skip_space() {
        // JSON's four space bytes all sort below '!': one compare in the
        // usual case of none (a chunk is written without spaces).
        while (p_ != end_ && static_cast<unsigned char>(*p_) <= ' ' &&
               (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
            ++p_;
    }

    template <std::size_t N>
    bool literal(const char (&word)[N]) {
        constexpr std::size_t n = N - 1;  // without the array's NUL
        if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
        p_ += n;
        return true;
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    bool number() {
        // -?(0|[1-9][0-9]{0,17})(\.[0-9]+)?  : an exponent or a longer
        // integer is left to the general parser (RapidJSON turns those into
        // doubles, or errors past DBL_MAX). A local cursor: the loops keep it
        // in a register.
        const char* q = p_;
        const bool negative = *q == '-';
        if (negative) ++q;
        if (q == end_ || !digit(*q)) return false;
        std::uint64_t value = 0;  // unsigned: a long run of digits wraps, defined
        if (*q == '0') {
            ++q;
        } else {
            const char* const first = q;
            while (q != end_ && digit(*q)) value = value * 10 + static_cast<unsigned>(*q++ - '0');
            if (q - first > 18) return false;  // its value unused
        }
        bool fraction = false;
        if (q != end_ && *q == '.') {
            ++q;
            if (q == end_ || !digit(*q)) return false;
            while (q != end_ && digit(*q)) ++q;
            fraction = true;
        }
        if (q != end_ && (*q == 'e' || *q == 'E')) return false;
        p_ = q;
        if (fraction) return handler_.NonInteger();
        const auto magnitude = static_cast<std::int64_t>(value);  // under 10^18
        return handler_.Int64(negative ? -magnitude : magnitude);
    }

    /// The string at p_ (its opening quote); p_ moves past the closing one.
    bool string(std::string_view& out) {
        const char* const start = ++p_;
        const char* q = start;
#if defined(__SSE2__)
        // 16 bytes at a time while they are inside the text: the first quote,
        // backslash or control byte (the unsigned minimum with 0x1F equals the
        // byte only for bytes up to 0x1F).
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                      control = _mm_set1_epi8(0x1F);
        while (end_ - q >= 16) {
            const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
            const __m128i hits = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash)),
                _mm_cmpeq_epi8(_mm_min_epu8(block, control), block));
            const int mask = _mm_movemask_epi8(hits);
            if (mask != 0) {
                q += __builtin_ctz(static_cast<unsigned>(mask));
                break;
            }
            q += 16;
        }
#endif
        for (; q != end_; ++q) {
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                out = std::string_view(start, static_cast<std::size_t>(q - start));
                p_ = q + 1;
                return true;
            }
            if (c == '\\') return unescape(start, q, out);
            if (c < 0x20) return false;
        }
        return false;
    }

    /// The rest of a string whose first escape is at `escape`, decoded into
    /// scratch_ at the string's own offset in the text.
    bool unescape(const char* start, const char* escape, std::string_view& out) {
        const std::size_t text_size = static_cast<std::size_t>(end_ - begin_);
        if (scratch_.size() < text_size) scratch_.resize(text_size);
        char* const first = scratch_.data() + (start - begin_);
        char* w = first;
        for (const char* r = start; r != escape; ++r) *w++ = *r;
        const char* q = escape;
        while (q != end_) {
            const auto c = static_cast<unsigned char>(*q);
            if (c == '"') {
                out = std::string_view(first, static_cast<std::size_t>(w - first));
                p_ = q + 1;
                return true;
            }
            if (c < 0x20) return false;
            if (c != '\\') {
                *w++ = *q++;
                continue;
            }
            if (end_ - q < 2) return false;
            switch (q[1]) {
                case '"':
                    *w++ = '"';
                    break;
                case '\\':
                    *w++ = '\\';
                    break;
                case '/':
                    *w++ = '/';
                    break;
                case 'b':
                    *w++ = '\b';
                    break;
                case 'f':
                    *w++ = '\f';
                    break;
                case 'n':
                    *w++ = '\n';
                    break;
                case 'r':
                    *w++ = '\r';
                    break;
                case 't':
                    *w++ = '\t';
                    break;
                case 'u': {
                    std::uint32_t unit = 0;
                    if (!hex4(q + 2, unit)) return false;
                    q += 6;
                    if (unit >= 0xDC00 && unit <= 0xDFFF) return false;  // a lone low surrogate
                    if (unit >= 0xD800 && unit <= 0xDBFF) {
                        std::uint32_t low = 0;
                        if (end_ - q < 6 || q[0] != '\\' || q[1] != 'u' || !hex4(q + 2, low) ||
                            low < 0xDC00 || low > 0xDFFF)
                            return false;
                        q += 6;
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    }
                    w = utf8(unit, w);
                    continue;
                }
                default:
                    return false;
            }
            q += 2;
        }
        return false;
    }

    bool hex4(const char* at, std::uint32_t& unit) const {
        if (end_ - at < 4) return false;
        for (int i = 0; i < 4; ++i) {
            const char c = at[i];
            std::uint32_t v;
            if (c >= '0' && c <= '9')
                v = static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v = static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v = static_cast<std::uint32_t>(c - 'A' + 10);
            else
                return false;
            unit = unit << 4 | v;
        }
        return true;
    }

    static char* utf8(std::uint32_t cp, char* w) {
        if (cp < 0x80) {
            *w++ = static_cast<char>(cp);
        } else if (cp < 0x800) {
            *w++ = static_cast<char>(0xC0 | (cp >> 6));
            *w++ = static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *w++ = static_cast<char>(0xE0 | (cp >> 12));
            *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            *w++ = static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            *w++ = static_cast<char>(0xF0 | (cp >> 18));
            *w++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            *w++ = static_cast<char>(0x80 | (cp & 0x3F));
        }
        return w;
    }

    const char* const begin_;
    const char* p_;
    const char* const end_;
    std::string& scratch_;
    Handler& handler_;
};

/// Scans `text` into `handler`; see StrictJsonScanner.
template <typename Handler>
bool scan_strict_json(std::string_view text, std::string& scratch, Handler& handler) {
    return StrictJsonScanner<Handler>(text, scratch, handler).scan();
}

}  // namespace nous::llm::detail
