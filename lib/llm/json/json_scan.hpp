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
          end_(text.data() + text.size()),
          scratch_(scratch),
          handler_(handler) {}

    /// True when the whole text is one value of the subset and the handler took every call.
    bool scan() {
        const char* p = value(skip_space(begin_), 0);
        return p && skip_space(p) == end_;
    }

    /// One string token of the subset at `p` (inside the text, at its opening
    /// quote or not): past its closing quote, with `out` its value (unescaped
    /// into the scratch buffer, as scan() does); nullptr when it is none.
    /// The handler is not called (any type will do when only this is used).
    const char* string_token(const char* p, std::string_view& out) {
        if (p == end_ || *p != '"') return nullptr;
        return string(p, out);
    }

  private:
    // Each step takes the cursor and returns it moved past what it read, or
    // nullptr to refuse. The cursor is never a member nor passed by
    // reference: the handler's stores (views: `const char*` pointers) could
    // alias it under the type rules, and it would be reloaded after each.

    // value() is inlined into the object and array loops, so that a member
    // that is a string, number or literal costs no call; only a nested
    // container recurses (through object() or array()).
    [[gnu::always_inline]] const char* value(const char* p, int depth) {
        if (p == end_) return nullptr;
        switch (*p) {
            case '{':
                return object(p, depth + 1);
            case '[':
                return array(p, depth + 1);
            case '"': {
                std::string_view s;
                p = string(p, s);
                return p && handler_.String(s) ? p : nullptr;
            }
            case 't':
                p = literal(p, "true");
                return p && handler_.Bool(true) ? p : nullptr;
            case 'f':
                p = literal(p, "false");
                return p && handler_.Bool(false) ? p : nullptr;
            case 'n':
                p = literal(p, "null");
                return p && handler_.Null() ? p : nullptr;
            default:
                return number(p);
        }
    }

    [[gnu::noinline]] const char* object(const char* p, int depth) {
        if (depth > max_depth || !handler_.StartObject()) return nullptr;
        p = skip_space(p + 1);  // past '{'
        std::uint32_t members = 0;
        if (p != end_ && *p == '}') return handler_.EndObject(members) ? p + 1 : nullptr;
        for (;;) {
            std::string_view key;
            if (p == end_ || *p != '"' || !(p = string(p, key)) || !handler_.Key(key))
                return nullptr;
            p = skip_space(p);
            if (p == end_ || *p != ':') return nullptr;
            if (!(p = value(skip_space(p + 1), depth))) return nullptr;
            ++members;
            p = skip_space(p);
            if (p == end_) return nullptr;
            if (*p == '}') return handler_.EndObject(members) ? p + 1 : nullptr;
            if (*p != ',') return nullptr;
            p = skip_space(p + 1);
        }
    }

    [[gnu::noinline]] const char* array(const char* p, int depth) {
        if (depth > max_depth || !handler_.StartArray()) return nullptr;
        p = skip_space(p + 1);  // past '['
        std::uint32_t elements = 0;
        if (p != end_ && *p == ']') return handler_.EndArray(elements) ? p + 1 : nullptr;
        for (;;) {
            if (!(p = value(p, depth))) return nullptr;
            ++elements;
            p = skip_space(p);
            if (p == end_) return nullptr;
            if (*p == ']') return handler_.EndArray(elements) ? p + 1 : nullptr;
            if (*p != ',') return nullptr;
            p = skip_space(p + 1);
        }
    }

    const char* skip_space(const char* p) const {
        // JSON's four space bytes all sort below '!': one compare in the
        // usual case of none (a chunk is written without spaces).
        while (p != end_ && static_cast<unsigned char>(*p) <= ' ' &&
               (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            ++p;
        return p;
    }

    template <std::size_t N>
    const char* literal(const char* p, const char (&word)[N]) const {
        constexpr std::size_t n = N - 1;  // without the array's NUL
        if (static_cast<std::size_t>(end_ - p) < n || std::memcmp(p, word, n) != 0) return nullptr;
        return p + n;
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    const char* number(const char* p) {
        // -?(0|[1-9][0-9]{0,17})(\.[0-9]+)?  : an exponent or a longer
        // integer is left to the general parser (RapidJSON turns those into
        // doubles, or errors past DBL_MAX).
        const bool negative = *p == '-';
        if (negative) ++p;
        if (p == end_ || !digit(*p)) return nullptr;
        std::uint64_t value = 0;  // unsigned: a long run of digits wraps, defined
        if (*p == '0') {
            ++p;
        } else {
            const char* const first = p;
            while (p != end_ && digit(*p)) value = value * 10 + static_cast<unsigned>(*p++ - '0');
            if (p - first > 18) return nullptr;  // its value unused
        }
        bool fraction = false;
        if (p != end_ && *p == '.') {
            ++p;
            if (p == end_ || !digit(*p)) return nullptr;
            while (p != end_ && digit(*p)) ++p;
            fraction = true;
        }
        if (p != end_ && (*p == 'e' || *p == 'E')) return nullptr;
        if (fraction) return handler_.NonInteger() ? p : nullptr;
        const auto magnitude = static_cast<std::int64_t>(value);  // under 10^18
        return handler_.Int64(negative ? -magnitude : magnitude) ? p : nullptr;
    }

    /// The string at p (its opening quote); past its closing quote.
    const char* string(const char* p, std::string_view& out) {
        const char* const start = p + 1;
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
                return q + 1;
            }
            if (c == '\\') return unescape(start, q, out);
            if (c < 0x20) return nullptr;
        }
        return nullptr;
    }

    /// The rest of a string whose first escape is at `escape`, decoded into
    /// scratch_ at the string's own offset in the text; past its closing quote.
    const char* unescape(const char* start, const char* escape, std::string_view& out) {
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
                return q + 1;
            }
            if (c < 0x20) return nullptr;
            if (c != '\\') {
                *w++ = *q++;
                continue;
            }
            if (end_ - q < 2) return nullptr;
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
                    if (!hex4(q + 2, unit)) return nullptr;
                    q += 6;
                    if (unit >= 0xDC00 && unit <= 0xDFFF) return nullptr;  // a lone low surrogate
                    if (unit >= 0xD800 && unit <= 0xDBFF) {
                        std::uint32_t low = 0;
                        if (end_ - q < 6 || q[0] != '\\' || q[1] != 'u' || !hex4(q + 2, low) ||
                            low < 0xDC00 || low > 0xDFFF)
                            return nullptr;
                        q += 6;
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    }
                    w = utf8(unit, w);
                    continue;
                }
                default:
                    return nullptr;
            }
            q += 2;
        }
        return nullptr;
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
    const char* const end_;
    std::string& scratch_;
    Handler& handler_;
};

/// Scans `text` into `handler`; see StrictJsonScanner.
template <typename Handler>
bool scan_strict_json(std::string_view text, std::string& scratch, Handler& handler) {
    return StrictJsonScanner<Handler>(text, scratch, handler).scan();
}

/// A string member the fast readers look at: kept the
/// first time; a second one stops the reader (the document read takes the
/// first, whatever it is, and decides).
inline bool first_string(bool& seen, std::string_view& slot, std::string_view v) {
    if (seen) return false;
    seen = true;
    slot = v;
    return true;
}

}  // namespace nous::llm::detail
