// A JSON array streamed element by element (Gemini streamGenerateContent):
// top-level elements are cut out by nesting depth, correct across strings,
// escapes and splits at any byte, then checked with RapidJSON.

#include <rapidjson/document.h>

#include "codec/decoders.hpp"
#include "core/json_limits.hpp"

namespace nous::http {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class JsonArrayDecoder final : public detail::CountingDecoder {
  public:
    explicit JsonArrayDecoder(std::size_t max_event_bytes) : max_(max_event_bytes) {}

    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool&) override {
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            const char c = bytes[i];
            ++scanned_;
            any_byte_ = true;
            switch (state_) {
                case State::before_array:
                    if (is_space(c)) continue;
                    if (c != '[')
                        return detail::malformed_stream(
                            "JSON array stream does not start with '['");
                    state_ = State::first_element;
                    continue;
                case State::first_element:
                case State::before_element:
                    if (is_space(c)) continue;
                    if (c == ']' && state_ == State::first_element) {
                        state_ = State::after_array;
                        continue;
                    }
                    if (c == ']' || c == ',')
                        return detail::malformed_stream("JSON array: missing element");
                    state_ = State::in_element;
                    depth_ = 0;
                    in_string_ = escape_ = false;
                    --i;  // re-read this byte as the element's first
                    --scanned_;
                    continue;
                case State::in_element: {
                    // Scan the run of bytes that stays inside the element, then copy it at once.
                    std::size_t start = i;
                    bool ended = false;
                    for (; i < bytes.size(); ++i) {
                        const char d = bytes[i];
                        if (i > start) ++scanned_;
                        if (in_string_) {
                            if (escape_)
                                escape_ = false;
                            else if (d == '\\')
                                escape_ = true;
                            else if (d == '"') {
                                in_string_ = false;
                                if (depth_ == 0) {  // a top-level string ends here
                                    ++i;
                                    ended = true;
                                    break;
                                }
                            }
                            continue;
                        }
                        if (d == '"') {
                            in_string_ = true;
                        } else if (d == '{' || d == '[') {
                            ++depth_;
                        } else if (d == '}' || d == ']') {
                            if (depth_ == 0) {  // the array's own ']' after a number or literal
                                ended = true;
                                break;
                            }
                            if (--depth_ == 0) {
                                ++i;
                                ended = true;
                                break;
                            }
                        } else if (depth_ == 0 && (d == ',' || is_space(d))) {
                            ended = true;  // the end of a number or literal
                            break;
                        }
                    }
                    if (element_.size() + (i - start) > max_)
                        return Error(ErrorCode::buffer_overflow,
                                     "JSON array element exceeds the decoder cap of " +
                                         std::to_string(max_) + " bytes");
                    element_.append(bytes.substr(start, i - start));
                    if (!ended) return std::nullopt;
                    if (auto e = emit(out)) return e;
                    state_ = State::after_element;
                    --i;  // the loop's ++i moves to the byte after the element
                    continue;
                }
                case State::after_element:
                    if (is_space(c)) continue;
                    if (c == ',')
                        state_ = State::before_element;
                    else if (c == ']')
                        state_ = State::after_array;
                    else
                        return detail::malformed_stream(
                            "JSON array: expected ',' or ']' after an element");
                    continue;
                case State::after_array:
                    if (!is_space(c))
                        return detail::malformed_stream("JSON array: data after the closing ']'");
                    continue;
            }
        }
        return std::nullopt;
    }

    std::optional<Error> finish(std::vector<Event>&) override {
        if (state_ == State::after_array || !any_byte_) return std::nullopt;
        return Error(ErrorCode::truncated, "JSON array stream ended before its closing ']'");
    }

  private:
    std::optional<Error> emit(std::vector<Event>& out) {
        // Server bytes: refuse deep nesting before RapidJSON recurses into it.
        if (!detail::json_depth_within(element_))
            return detail::malformed_stream("JSON array element nested deeper than " +
                                            std::to_string(detail::max_json_depth) + " levels");
        rapidjson::Document doc;
        doc.Parse(element_.data(), element_.size());
        if (doc.HasParseError())
            return detail::malformed_stream("JSON array element is not valid JSON");
        Event e;
        e.type = "json";
        e.data = std::move(element_);
        element_.clear();
        out.push_back(std::move(e));
        return std::nullopt;
    }

    enum class State {
        before_array,
        first_element,
        before_element,
        in_element,
        after_element,
        after_array
    };
    const std::size_t max_;
    State state_ = State::before_array;
    int depth_ = 0;
    bool in_string_ = false, escape_ = false, any_byte_ = false;
    std::string element_;
};

}  // namespace

std::unique_ptr<Decoder> make_json_array_decoder(std::size_t max_event_bytes) {
    return std::make_unique<JsonArrayDecoder>(max_event_bytes);
}

}  // namespace nous::http
