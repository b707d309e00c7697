#pragma once
// The pieces of an embeddings response that carry its numbers, read straight
// into the rows they belong to (nous_llm internal): a cursor over JSON text
// that reads the few members it wants and skips the rest, and a float array
// parsed number by number with std::from_chars (the float nearest the decimal, which a
// double parsed and then rounded is not always). No DOM, no string or vector
// per row; a base64 string is base64_floats.hpp's. docs/embeddings.md,
// "Decoding".

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nous::llm::detail {

/// A read position in JSON text. Each step returns false on text that is not
/// JSON of the expected shape, and then the cursor is not to be used again.
class JsonCursor {
  public:
    explicit JsonCursor(std::string_view text) noexcept
        : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

    /// Bytes read so far.
    std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - begin_); }

    /// Whitespace skipped: the next byte, or 0 at the end.
    char peek() noexcept;
    /// The next byte (after whitespace) is `c`: consumed.
    bool eat(char c) noexcept;
    bool at_end() noexcept { return peek() == 0 && p_ == end_; }

    /// A string: its text between the quotes, escapes as written
    /// (`escaped` says whether any is there).
    bool string(std::string_view& raw, bool& escaped) noexcept;
    /// An integer that fits in 64 bits.
    bool integer(std::int64_t& value) noexcept;
    /// Any one value, checked for shape (nesting at most 64 deep).
    bool skip_value() noexcept { return skip(0); }
    /// An array of JSON numbers into `out`, at most `max` of them (more is an
    /// error); `count` is how many there were. Not finite, or not a JSON
    /// number (NaN, Infinity, 1., .5, 01, +1): false.
    bool floats(float* out, std::size_t max, std::size_t& count) noexcept;
    /// The same, into a growing vector (a row whose width is not known yet).
    bool floats(std::vector<float>& out);

    /// Members of an object, each handed to `member(key)`, which must read
    /// its value (or skip it) and return false to stop with an error.
    template <typename Member>
    bool object(Member&& member) {
        if (!eat('{')) return false;
        if (eat('}')) return true;
        do {
            std::string_view key;
            bool escaped = false;
            if (!string(key, escaped) || !eat(':') || !member(key)) return false;
        } while (eat(','));
        return eat('}');
    }
    /// Elements of an array, each read by `element()`.
    template <typename Element>
    bool array(Element&& element) {
        if (!eat('[')) return false;
        if (eat(']')) return true;
        do {
            if (!element()) return false;
        } while (eat(','));
        return eat(']');
    }

  private:
    bool skip(int depth) noexcept;
    const char* begin_;
    const char* p_;
    const char* end_;
};

/// One JSON number token at [p, end) into the nearest float: past it, or
/// nullptr when it is no JSON number or overflows a float (an underflow is
/// the nearest float, 0 or subnormal).
const char* parse_json_float(const char* p, const char* end, float& out) noexcept;

}  // namespace nous::llm::detail
