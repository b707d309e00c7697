// The incremental JSON reader (nous/llm/partial_json.hpp): one pass over the
// bytes, whatever the deltas' sizes, building the value as it goes. Strings,
// most of a structured answer's bytes, are appended a run at a time; a
// delta that ends inside an escape or a UTF-8 character holds those bytes
// back until the rest arrives, so a partial string is always whole text.

#include "nous/llm/partial_json.hpp"

#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace nous::llm {

namespace {

/// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
    std::size_t i = 0;
    auto digits = [&] {
        const std::size_t from = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        return i > from;
    };
    if (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '0') {
        ++i;
    } else if (!digits()) {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (!digits()) return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (!digits()) return false;
    }
    return i == s.size();
}

/// Whether the library's whole-document reader (RapidJSON, through
/// nous::http::parse_json) takes `number`, valid JSON number text, as a finite
/// double. The two readers must give one verdict on the same answer, and
/// RapidJSON rounds at the edge of the range its own way: to it
/// "1.7976931348623158e308" is infinite where strtod reads DBL_MAX, and it
/// refuses any exponent past 308 ("0e400").
bool whole_reader_takes(const std::string& number) {
    struct Handler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
        bool finite = true;
        bool Double(double d) {
            finite = std::isfinite(d);
            return true;
        }
    } handler;
    rapidjson::Reader reader;  // its stack is allocated only for strings: none here
    rapidjson::StringStream in(number.c_str());
    return !reader.Parse(in, handler).IsError() && handler.finite;
}

/// Bytes at the end of `s` that start a UTF-8 character not yet whole.
std::size_t incomplete_utf8_tail(const std::string& s) {
    const std::size_t n = s.size();
    for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
        const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > back ? back : 0;
    }
    return 0;
}

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

struct PartialJson::State {
    enum class Expect {
        value,           ///< a value (the root, after ':' or ',' in an array)
        value_or_close,  ///< after '['
        key,             ///< after ',' in an object
        key_or_close,    ///< after '{'
        colon,           ///< after a key
        comma_or_close,  ///< after a member or element
        nothing,         ///< the root value is whole
    };
    enum class Lexeme { none, string, number, literal };
    struct Frame {
        JsonValue* container;
    };

    JsonValue root;
    std::vector<Frame> stack;
    Expect expect = Expect::value;
    Lexeme lexeme = Lexeme::none;
    bool started = false;
    std::string error;
    std::size_t offset = 0;  ///< bytes read before the current feed

    // A string being read: into a key or a value in the tree.
    bool string_is_key = false;
    std::string key;                ///< the key being read, then waiting for its value
    std::string* target = nullptr;  ///< the string bytes go to
    std::string utf8_hold;          ///< a UTF-8 character's first bytes, held back
    int escape = 0;                 ///< 0 none; 1 after '\'; 2..5 reading \u hex digits
    std::uint32_t code = 0;         ///< the \u digits so far
    std::uint32_t high = 0;         ///< a high surrogate waiting for its low half
    std::string token;              ///< a number's or literal's characters so far

    bool fail(std::size_t at, const std::string& why) {
        error = "at byte " + std::to_string(offset + at) + ": " + why;
        return false;
    }

    /// A new value where the grammar wants one.
    JsonValue& place(JsonValue::Type type) {
        started = true;
        JsonValue* v;
        if (stack.empty()) {
            v = &root;
        } else {
            JsonValue* top = stack.back().container;
            if (top->type == JsonValue::Type::array) {
                v = &top->elements.emplace_back();
            } else {
                v = &top->members.emplace_back(JsonMember{std::move(key), JsonValue()}).second;
                key.clear();
            }
        }
        v->type = type;
        return *v;
    }

    /// A value ended: what the grammar wants next.
    void value_done() { expect = stack.empty() ? Expect::nothing : Expect::comma_or_close; }

    bool finish_number(std::size_t at) {
        if (!is_json_number(token)) return fail(at, "malformed number '" + token + "'");
        if (!whole_reader_takes(token)) return fail(at, "number too big: " + token);
        place(JsonValue::Type::number).number = std::move(token);
        token.clear();
        lexeme = Lexeme::none;
        value_done();
        return true;
    }

    void finish_literal() {
        if (token == "true" || token == "false") {
            place(JsonValue::Type::boolean).boolean = token == "true";
        } else if (token == "null") {
            place(JsonValue::Type::null);
        }
        token.clear();
        lexeme = Lexeme::none;
        value_done();
    }

    /// The string bytes from `p` on, up to its closing quote: false on an error.
    bool read_string(const char*& p, const char* end, const char* begin) {
        for (;;) {
            if (escape) {
                if (p == end) return true;
                const char c = *p++;
                if (escape == 1) {
                    char decoded = 0;
                    switch (c) {
                        case '"':
                            decoded = '"';
                            break;
                        case '\\':
                            decoded = '\\';
                            break;
                        case '/':
                            decoded = '/';
                            break;
                        case 'b':
                            decoded = '\b';
                            break;
                        case 'f':
                            decoded = '\f';
                            break;
                        case 'n':
                            decoded = '\n';
                            break;
                        case 'r':
                            decoded = '\r';
                            break;
                        case 't':
                            decoded = '\t';
                            break;
                        case 'u':
                            escape = 2;
                            code = 0;
                            continue;
                        default:
                            return fail(static_cast<std::size_t>(p - begin - 1),
                                        "invalid escape in a string");
                    }
                    if (high)
                        return fail(static_cast<std::size_t>(p - begin - 1),
                                    "a high surrogate without its low half");
                    *target += decoded;
                    escape = 0;
                    continue;
                }
                const int h = hex_value(c);
                if (h < 0)
                    return fail(static_cast<std::size_t>(p - begin - 1), "invalid \\u escape");
                code = code * 16 + static_cast<std::uint32_t>(h);
                if (++escape < 6) continue;
                escape = 0;
                if (high) {
                    if (code < 0xDC00 || code > 0xDFFF)
                        return fail(static_cast<std::size_t>(p - begin - 1),
                                    "a high surrogate without its low half");
                    append_utf8(*target, 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00));
                    high = 0;
                } else if (code >= 0xD800 && code <= 0xDBFF) {
                    high = code;  // held until its low half: never half a character
                } else {
                    // A lone low surrogate is taken as its code point, as
                    // RapidJSON (every other parse of ours) takes it.
                    append_utf8(*target, code);
                }
                continue;
            }
            // A run of plain bytes, appended at once.
            const char* run = p;
            while (p != end) {
                const auto c = static_cast<unsigned char>(*p);
                if (c == '"' || c == '\\' || c < 0x20) break;
                ++p;
            }
            std::size_t fresh = 0;  ///< bytes this run adds, held ones included
            if (p != run) {
                if (high)
                    return fail(static_cast<std::size_t>(run - begin),
                                "a high surrogate without its low half");
                fresh = utf8_hold.size() + static_cast<std::size_t>(p - run);
                if (!utf8_hold.empty()) {
                    *target += utf8_hold;
                    utf8_hold.clear();
                }
                target->append(run, static_cast<std::size_t>(p - run));
            }
            if (p == end) {
                // The delta ends inside the string: hold back half a character
                // (of this run's bytes only: what a partial value showed stays).
                const std::size_t tail = std::min(incomplete_utf8_tail(*target), fresh);
                if (tail) {
                    utf8_hold.assign(*target, target->size() - tail, tail);
                    target->resize(target->size() - tail);
                }
                return true;
            }
            const auto c = static_cast<unsigned char>(*p);
            if (c < 0x20)
                return fail(static_cast<std::size_t>(p - begin),
                            "a control character inside a string");
            ++p;
            if (c == '\\') {
                if (!utf8_hold.empty()) {
                    *target += utf8_hold;
                    utf8_hold.clear();
                }
                escape = 1;
                continue;
            }
            // The closing quote.
            if (high)
                return fail(static_cast<std::size_t>(p - begin - 1),
                            "a high surrogate without its low half");
            if (!utf8_hold.empty()) {
                *target += utf8_hold;
                utf8_hold.clear();
            }
            lexeme = Lexeme::none;
            target = nullptr;
            if (string_is_key) {
                expect = Expect::colon;
            } else {
                value_done();
            }
            return true;
        }
    }

    bool feed(std::string_view text) {
        const char* const begin = text.data();
        const char* p = begin;
        const char* const end = begin + text.size();
        while (p != end) {
            switch (lexeme) {
                case Lexeme::string:
                    if (!read_string(p, end, begin)) return false;
                    continue;
                case Lexeme::number: {
                    const char c = *p;
                    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
                        c == 'E') {
                        token += c;
                        ++p;
                        continue;
                    }
                    if (!finish_number(static_cast<std::size_t>(p - begin))) return false;
                    continue;  // the delimiter is read below, in the grammar's state
                }
                case Lexeme::literal: {
                    token += *p++;
                    const std::string_view t = token;
                    const bool prefix = std::string_view("true").substr(0, t.size()) == t ||
                                        std::string_view("false").substr(0, t.size()) == t ||
                                        std::string_view("null").substr(0, t.size()) == t;
                    if (!prefix)
                        return fail(static_cast<std::size_t>(p - begin - 1), "invalid literal");
                    if (t == "true" || t == "false" || t == "null") finish_literal();
                    continue;
                }
                case Lexeme::none:
                    break;
            }
            const char c = *p;
            if (is_space(c)) {
                ++p;
                continue;
            }
            const std::size_t at = static_cast<std::size_t>(p - begin);
            switch (expect) {
                case Expect::nothing:
                    return fail(at, "text after the JSON value");
                case Expect::colon:
                    if (c != ':') return fail(at, "expected ':' after a key");
                    ++p;
                    expect = Expect::value;
                    continue;
                case Expect::comma_or_close: {
                    JsonValue* top = stack.back().container;
                    const bool array = top->type == JsonValue::Type::array;
                    if (c == ',') {
                        ++p;
                        expect = array ? Expect::value : Expect::key;
                        continue;
                    }
                    if (c == (array ? ']' : '}')) {
                        ++p;
                        stack.pop_back();
                        value_done();
                        continue;
                    }
                    return fail(at, array ? "expected ',' or ']'" : "expected ',' or '}'");
                }
                case Expect::key_or_close:
                    if (c == '}') {
                        ++p;
                        stack.pop_back();
                        value_done();
                        continue;
                    }
                    [[fallthrough]];
                case Expect::key:
                    if (c != '"') return fail(at, "expected a member's name");
                    ++p;
                    lexeme = Lexeme::string;
                    string_is_key = true;
                    key.clear();
                    target = &key;
                    continue;
                case Expect::value_or_close:
                    if (c == ']') {
                        ++p;
                        stack.pop_back();
                        value_done();
                        continue;
                    }
                    [[fallthrough]];
                case Expect::value:
                    ++p;
                    if (c == '{' || c == '[') {
                        if (stack.size() >= max_depth)
                            return fail(at, "nested deeper than " + std::to_string(max_depth));
                        JsonValue& v =
                            place(c == '{' ? JsonValue::Type::object : JsonValue::Type::array);
                        stack.push_back(Frame{&v});
                        expect = c == '{' ? Expect::key_or_close : Expect::value_or_close;
                    } else if (c == '"') {
                        target = &place(JsonValue::Type::string).string;
                        string_is_key = false;
                        lexeme = Lexeme::string;
                    } else if (c == '-' || (c >= '0' && c <= '9')) {
                        token.assign(1, c);
                        lexeme = Lexeme::number;
                    } else if (c == 't' || c == 'f' || c == 'n') {
                        token.assign(1, c);
                        lexeme = Lexeme::literal;
                    } else {
                        return fail(at, std::string("unexpected character '") + c + "'");
                    }
                    continue;
            }
        }
        return true;
    }
};

PartialJson::PartialJson() : state_(std::make_unique<State>()) {}
PartialJson::~PartialJson() = default;
PartialJson::PartialJson(PartialJson&&) noexcept = default;
PartialJson& PartialJson::operator=(PartialJson&&) noexcept = default;

bool PartialJson::feed(std::string_view text) {
    State& s = *state_;
    if (!s.error.empty()) return false;
    const bool ok = s.feed(text);
    s.offset += text.size();
    return ok;
}

bool PartialJson::finish() {
    State& s = *state_;
    if (!s.error.empty()) return false;
    if (s.lexeme == State::Lexeme::number && !s.finish_number(0)) return false;
    if (s.expect != State::Expect::nothing) {
        s.error = "at byte " + std::to_string(s.offset) + ": the text ends before the JSON value";
        return false;
    }
    return true;
}

const JsonValue& PartialJson::value() const noexcept { return state_->root; }

bool PartialJson::complete() const noexcept {
    return state_->error.empty() && state_->expect == State::Expect::nothing;
}

const std::string& PartialJson::error() const noexcept { return state_->error; }

}  // namespace nous::llm
