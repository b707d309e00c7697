// Response heads (status line, fields, 1xx) and body framing, sans-I/O.

#include "codec/http1_parser.hpp"

#include <charconv>
#include <cstring>

#include "core/limits.hpp"
#include "core/strings.hpp"

namespace nous::http::detail {

void HeadParser::reset() {
    // bytes_scanned_ is kept across 1xx heads: it counts the work of the whole response.
    buf_.clear();
    scanned_ = 0;
    status_line_checked_ = false;
    head_ = ResponseHead{};
    error_.clear();
}

HeadParser::Status HeadParser::fail(std::string why) {
    error_ = std::move(why);
    return Status::error;
}

HeadParser::Status HeadParser::feed(std::string_view input, std::size_t& consumed) {
    consumed = 0;
    // Fast path: the whole head is in `input` and nothing is buffered: parse in place.
    if (buf_.empty()) {
        if (std::size_t end = find_head_end(input, 0); end != 0) {
            if (end > max_header_bytes)
                return fail("response head exceeds " + std::to_string(max_header_bytes) + " bytes");
            consumed = end;
            return parse(input.substr(0, end));
        }
    }
    // Slow path: accumulate. Scan only new bytes (plus 2 of overlap), so a
    // head fed one byte at a time is still linear.
    std::size_t before = buf_.size();
    std::size_t room = max_header_bytes + 4 - before;
    std::string_view take = input.substr(0, room);
    buf_.append(take);
    // A peer that is not speaking HTTP fails as soon as its first line ends
    // (or its first bytes differ), not when it closes.
    if (!status_line_checked_) {
        const std::size_t prefix = std::min<std::size_t>(buf_.size(), 7);
        if (std::string_view(buf_).substr(0, prefix) !=
            std::string_view("HTTP/1.").substr(0, prefix))
            return fail("malformed status line (not HTTP/1.x)");
        if (auto nl = buf_.find('\n'); nl != std::string::npos) {
            status_line_checked_ = true;
            ResponseHead probe;
            std::string_view line(buf_.data(), nl);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (auto why = parse_status_line(line, probe)) return fail(*why);
        }
    }
    std::size_t from = scanned_ > 2 ? scanned_ - 2 : 0;
    if (std::size_t end = find_head_end(buf_, from); end != 0) {
        consumed = end - before;
        buf_.resize(end);
        return parse(buf_);
    }
    scanned_ = buf_.size();
    consumed = take.size();
    if (buf_.size() > max_header_bytes)
        return fail("response head exceeds " + std::to_string(max_header_bytes) + " bytes");
    return Status::need_more;
}

std::size_t HeadParser::find_head_end(std::string_view text, std::size_t from) {
    // "\n\n" or "\n\r\n" ends the head; returns the head length, or 0.
    while (from < text.size()) {
        const char* nl =
            static_cast<const char*>(std::memchr(text.data() + from, '\n', text.size() - from));
        std::size_t i = nl ? static_cast<std::size_t>(nl - text.data()) : text.size();
        bytes_scanned_ += i + 1 - from;
        if (!nl) return 0;
        if ((i >= 1 && text[i - 1] == '\n') ||
            (i >= 2 && text[i - 1] == '\r' && text[i - 2] == '\n'))
            return i + 1;
        from = i + 1;
    }
    return 0;
}

namespace {

/// RFC 9110 5.5: a CR, LF or NUL inside a received field value may be
/// replaced by SP. One rule for the reason phrase and every field value.
std::string clean_field_value(std::string_view value) {
    std::string out(value);
    for (char& c : out)
        if (c == '\r' || c == '\n' || c == '\0') c = ' ';
    return out;
}

}  // namespace

std::optional<std::string> HeadParser::parse_status_line(std::string_view line,
                                                         ResponseHead& head) {
    // "HTTP/1.1 200 OK"
    if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || !(line[7] == '0' || line[7] == '1') ||
        line[8] != ' ')
        return std::string("malformed status line");
    head.version_minor = line[7] - '0';
    int status = 0;
    auto digits = line.substr(9, 3);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + 3, status);
    if (ec != std::errc() || end != digits.data() + 3 || status < 100 || status > 999 ||
        (line.size() > 12 && line[12] != ' '))
        return std::string("malformed status code");
    head.status = status;
    head.reason = clean_field_value(line.size() > 13 ? line.substr(13) : "");
    return std::nullopt;
}

HeadParser::Status HeadParser::parse(std::string_view text) {
    auto next_line = [&text]() {
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return line;
    };
    if (auto why = parse_status_line(next_line(), head_)) return fail(*why);
    // Fields first (obs-fold unfolded), then their meaning.
    Headers& fields = head_.headers;
    fields.reserve(16);  // a typical response's fields without regrowing (and moving) the vector
    while (!text.empty()) {
        std::string_view line = next_line();
        if (line.empty()) break;
        if (line.front() == ' ' || line.front() == '\t') {
            // obs-fold: RFC 9112 5.2 says a user agent MUST replace it with SP.
            if (fields.empty()) return fail("obs-fold before any header field");
            std::string& value = fields.back().second;
            std::string more = clean_field_value(trim(line));
            if (!more.empty()) value += (value.empty() ? "" : " ") + more;
            continue;
        }
        auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) return fail("malformed header field");
        if (fields.size() == max_header_fields)
            return fail("more than " + std::to_string(max_header_fields) + " header fields");
        // The name checked and lower-cased in one pass, into its own string.
        std::string name(line.substr(0, colon));
        for (char& c : name) {
            if (!is_token_char(static_cast<unsigned char>(c)))
                return fail("malformed header field name");
            c = ascii_lower(c);
        }
        fields.emplace_back(std::move(name), clean_field_value(trim(line.substr(colon + 1))));
    }
    bool has_transfer_encoding = false;
    for (const auto& [name, value] : fields) {
        if (name == "content-length") {
            std::uint64_t n = 0;
            auto [p, e] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (e != std::errc() || p != value.data() + value.size() || value.empty())
                return fail("bad Content-Length");
            if (head_.content_length && *head_.content_length != n)
                return fail("conflicting Content-Length values");
            head_.content_length = n;
        } else if (name == "transfer-encoding") {
            has_transfer_encoding = true;
            // A comma-separated list of codings (RFC 9112 6.1), possibly over
            // several fields: only "chunked" is understood, and it must come last.
            std::string_view list = value;
            while (!list.empty()) {
                auto comma = list.find(',');
                std::string coding = to_lower(trim(list.substr(0, comma)));
                list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
                if (coding.empty()) continue;
                if (coding != "chunked")
                    return fail("unsupported Transfer-Encoding '" + coding + "'");
                if (head_.chunked) return fail("chunked applied twice");
                head_.chunked = true;
            }
        } else if (name == "connection") {
            std::string v = to_lower(value);
            if (v.find("close") != std::string::npos) head_.connection_close = true;
            if (v.find("keep-alive") != std::string::npos) head_.connection_keep_alive = true;
        }
    }
    if (has_transfer_encoding && !head_.chunked) return fail("Transfer-Encoding without chunked");
    if (head_.chunked && head_.content_length) {
        // RFC 9112 6.3: Transfer-Encoding wins, and the connection is never
        // reused (the message may be a smuggling attempt).
        head_.content_length.reset();
        head_.framing_conflict = true;
    }
    return Status::done;
}

std::string interim_overflow_message() {
    return "more than " + std::to_string(limits::max_interim_responses) +
           " interim (1xx) responses before the answer";
}

BodyFramer::Mode body_mode_for(const ResponseHead& head) {
    if (head.status < 200 || head.status == 204 || head.status == 304)
        return BodyFramer::Mode::none;
    if (head.chunked) return BodyFramer::Mode::chunked;
    if (head.content_length) return BodyFramer::Mode::length;
    return BodyFramer::Mode::until_close;
}

void BodyFramer::start(Mode mode, std::uint64_t length) {
    mode_ = mode;
    line_.clear();
    trailer_bytes_ = 0;
    error_.clear();
    remaining_ = length;
    switch (mode) {
        case Mode::none:
            state_ = State::done;
            break;
        case Mode::length:
            state_ = length == 0 ? State::done : State::data;
            break;
        case Mode::chunked:
            state_ = State::size_line;
            break;
        case Mode::until_close:
            state_ = State::data;
            break;
    }
}

std::size_t BodyFramer::fail(std::string why) {
    state_ = State::failed;
    error_ = std::move(why);
    return 0;
}

std::uint64_t BodyFramer::direct_read_limit() const noexcept {
    if (state_ != State::data) return 0;
    if (mode_ == Mode::until_close) return UINT64_MAX;
    return remaining_;
}

void BodyFramer::direct_received(std::size_t n) noexcept {
    if (mode_ == Mode::until_close) return;
    remaining_ -= n;
    if (remaining_ == 0) state_ = mode_ == Mode::chunked ? State::data_crlf : State::done;
}

bool BodyFramer::end_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (state_ == State::data_crlf) {
        if (!line.empty()) {
            fail("missing CRLF after chunk data");
            return false;
        }
        state_ = State::size_line;
    } else if (state_ == State::trailers) {
        if (line.empty()) state_ = State::done;
    } else {
        auto semi = line.find(';');
        std::string_view hex = trim(line.substr(0, semi));
        std::uint64_t size = 0;
        auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
        if (hex.empty() || ec != std::errc() || p != hex.data() + hex.size()) {
            fail("bad chunk size '" + std::string(hex.substr(0, 32)) + "'");
            return false;
        }
        if (size == 0) {
            state_ = State::trailers;
        } else {
            remaining_ = size;
            state_ = State::data;
        }
    }
    return true;
}

std::size_t BodyFramer::feed(const char* input, std::size_t n, std::string& out) {
    std::size_t used = 0;
    while (used < n && !done()) {
        std::string_view data;
        used += next_data(input + used, n - used, data);
        if (failed()) return 0;
        out.append(data);
    }
    return used;
}

namespace {

/// The value of a hex digit, or -1.
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::size_t BodyFramer::next_data(const char* input, std::size_t n, std::string_view& data) {
    constexpr std::size_t max_line = limits::max_chunk_line;
    data = {};
    std::size_t used = 0;
    while (used < n) {
        switch (state_) {
            case State::done:
            case State::failed:
                return used;
            case State::data: {
                std::size_t take = n - used;
                if (mode_ != Mode::until_close && take > remaining_)
                    take = static_cast<std::size_t>(remaining_);
                data = std::string_view(input + used, take);
                direct_received(take);
                used += take;
                // The CRLF after the chunk's data, when it is here already, is
                // taken with the data: the input holds nothing more unless
                // another chunk follows (a stream's reader asks whether bytes
                // are left to read before it waits on the socket).
                if (state_ == State::data_crlf && n - used >= 2 && input[used] == '\r' &&
                    input[used + 1] == '\n') {
                    used += 2;
                    state_ = State::size_line;
                }
                return used;
            }
            case State::size_line:
            case State::data_crlf:
            case State::trailers: {
                // The usual lines whole in the input, read without the general
                // line step: "HEX\r\n" (no extension, at most 16 digits: no
                // overflow) and the bare CRLF after a chunk's data. Anything
                // else takes the general step below, which decides the same
                // for these two shapes.
                if (line_.empty() && state_ == State::data_crlf && n - used >= 2 &&
                    input[used] == '\r' && input[used + 1] == '\n') {
                    used += 2;
                    state_ = State::size_line;
                    break;
                }
                if (line_.empty() && state_ == State::size_line) {
                    std::uint64_t size = 0;
                    std::size_t at = used;
                    for (int v; at < n && at - used < 16 && (v = hex_digit(input[at])) >= 0; ++at)
                        size = size << 4 | static_cast<std::uint64_t>(v);
                    if (at > used && n - at >= 2 && input[at] == '\r' && input[at + 1] == '\n') {
                        used = at + 2;
                        remaining_ = size;
                        state_ = size == 0 ? State::trailers : State::data;
                        break;
                    }
                }
                const char* nl =
                    static_cast<const char*>(std::memchr(input + used, '\n', n - used));
                const std::size_t upto = nl ? static_cast<std::size_t>(nl - input) + 1 : n;
                const std::size_t piece = upto - used;
                if (state_ == State::trailers) trailer_bytes_ += piece;
                if (line_.size() + piece > max_line || trailer_bytes_ > max_header_bytes)
                    return fail(state_ == State::trailers ? "trailer section too large"
                                                          : "chunk-size line too long");
                if (!nl) {
                    line_.append(input + used, piece);
                    return upto;
                }
                std::string_view line;
                if (line_.empty()) {
                    // The whole line is in this input: read in place, not
                    // copied into line_ first.
                    line = std::string_view(input + used, piece - 1);
                } else {
                    line_.append(input + used, piece);
                    line = std::string_view(line_.data(), line_.size() - 1);
                }
                used = upto;
                if (!end_line(line)) return 0;
                line_.clear();
                break;
            }
        }
    }
    return used;
}

}  // namespace nous::http::detail
