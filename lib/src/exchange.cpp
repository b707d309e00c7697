#include "exchange.hpp"

#include <rapidjson/document.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>


namespace nous::http::detail {

namespace {

std::chrono::microseconds micros(Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

ErrorCode code_for(IoStatus s) {
    switch (s) {
        case IoStatus::timeout_read: return ErrorCode::timeout_read;
        case IoStatus::timeout_total: return ErrorCode::timeout_total;
        case IoStatus::cancelled: return ErrorCode::cancelled;
        default: return ErrorCode::truncated;
    }
}

bool is_timeout_or_cancel(IoStatus s) {
    return s == IoStatus::timeout_read || s == IoStatus::timeout_total || s == IoStatus::cancelled;
}

std::optional<Milliseconds> parse_seconds(std::string_view text) {
    double seconds = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || p != text.data() + text.size() || !(seconds >= 0) || seconds > 1e9)
        return std::nullopt;
    return Milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

std::optional<Milliseconds> parse_http_date(std::string_view text) {
    std::tm tm{};
    std::string s(text);
    const char* end = ::strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end != '\0') return std::nullopt;
    auto when = std::chrono::system_clock::from_time_t(::timegm(&tm));
    auto delta = std::chrono::duration_cast<Milliseconds>(when - std::chrono::system_clock::now());
    return delta.count() < 0 ? Milliseconds(0) : delta;
}

std::optional<Milliseconds> parse_google_retry_info(std::string_view body) {
    if (body.empty() || body.size() > (1u << 20)) return std::nullopt;
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError()) return std::nullopt;
    auto check = [](const rapidjson::Value& error) -> std::optional<Milliseconds> {
        if (!error.IsObject()) return std::nullopt;
        auto details = error.FindMember("details");
        if (details == error.MemberEnd() || !details->value.IsArray()) return std::nullopt;
        for (const auto& d : details->value.GetArray()) {
            if (!d.IsObject()) continue;
            auto delay = d.FindMember("retryDelay");
            if (delay == d.MemberEnd() || !delay->value.IsString()) continue;
            std::string_view text(delay->value.GetString(), delay->value.GetStringLength());
            if (text.empty() || text.back() != 's') continue;
            if (auto ms = parse_seconds(text.substr(0, text.size() - 1))) return ms;
        }
        return std::nullopt;
    };
    if (doc.IsObject()) {
        if (auto e = doc.FindMember("error"); e != doc.MemberEnd()) return check(e->value);
    } else if (doc.IsArray()) {  // Gemini sometimes wraps errors in an array
        for (const auto& item : doc.GetArray())
            if (item.IsObject())
                if (auto e = item.FindMember("error"); e != item.MemberEnd())
                    if (auto ms = check(e->value)) return ms;
    }
    return std::nullopt;
}

}  // namespace

std::optional<Milliseconds> parse_retry_hint(const Headers& headers, std::string_view body) {
    for (const auto& [name, value] : headers)
        if (header_name_equals(name, "retry-after-ms"))
            if (auto ms = parse_seconds(value)) return Milliseconds(ms->count() / 1000);
    for (const auto& [name, value] : headers) {
        if (!header_name_equals(name, "retry-after")) continue;
        if (auto ms = parse_seconds(trim(value))) return ms;
        if (auto ms = parse_http_date(trim(value))) return ms;
    }
    return parse_google_retry_info(body);
}

std::string serialize_request_head(const Url& url, std::size_t body_size, const Headers& headers,
                                   bool absolute_form, const std::string& proxy_authorization) {
    bool has_host = false, has_type = false, has_agent = false;
    std::size_t size = 128 + url.target.size() + url.host.size();
    for (const auto& [k, v] : headers) {
        size += k.size() + v.size() + 4;
        has_host |= header_name_equals(k, "host");
        has_type |= header_name_equals(k, "content-type");
        has_agent |= header_name_equals(k, "user-agent");
    }
    std::string head;
    head.reserve(size);
    head += "POST ";
    if (absolute_form) head += url.scheme() + "://" + url.host_header();
    head += url.target;
    head += " HTTP/1.1\r\n";
    if (!has_host) head += "Host: " + url.host_header() + "\r\n";
    // Always a Content-Length: without one POCO-style servers half-close
    // and keep-alive dies (poco-1.11.md, "Sessions and keep-alive").
    head += "Content-Length: " + std::to_string(body_size) + "\r\n";
    if (!has_type) head += "Content-Type: application/json\r\n";
    if (!has_agent) head += "User-Agent: nous-http/0.1\r\n";
    if (!proxy_authorization.empty()) head += "Proxy-Authorization: " + proxy_authorization + "\r\n";
    for (const auto& [k, v] : headers) {
        // Framing is ours: a caller's Content-Length or Transfer-Encoding was
        // validated (and is dropped) in post().
        if (header_name_equals(k, "content-length") || header_name_equals(k, "transfer-encoding")) continue;
        head += k;
        head += ": ";
        head += v;
        head += "\r\n";
    }
    head += "\r\n";
    return head;
}

ResponseReader::ResponseReader(Connection& connection, const ExchangeParams& params, char* buffer, std::size_t size)
    : connection_(connection), params_(params), buffer_(buffer), size_(size) {}

std::optional<Error> ResponseReader::send(const Url& url, std::string_view body, const Headers& headers) {
    const std::string head = serialize_request_head(url, body.size(), headers, connection_.absolute_form(),
                                                    params_.proxy_authorization);
    IoResult w = connection_.write_all(head, body, params_.deadlines, params_.cancel);
    if (w.status == IoStatus::ok) return std::nullopt;
    stale_connection_ = w.status == IoStatus::reset;
    return is_timeout_or_cancel(w.status) ? Error(code_for(w.status), "sending the request: " + w.detail)
                                          : Error(ErrorCode::connect_failed, "sending the request: " + w.detail);
}

std::optional<Error> ResponseReader::fill() {
    IoResult r = connection_.read_some(buffer_, size_, params_.deadlines, params_.cancel);
    if (r.status == IoStatus::ok) {
        if (!any_response_byte_) first_byte_ = Clock::now();
        any_response_byte_ = true;
        have_ = r.bytes;
        used_ = 0;
        return std::nullopt;
    }
    if (is_timeout_or_cancel(r.status)) return Error(code_for(r.status), "waiting for the response: " + r.detail);
    if (!any_response_byte_) {
        stale_connection_ = r.status == IoStatus::eof || r.status == IoStatus::reset || r.status == IoStatus::tls_eof;
        return Error(ErrorCode::connect_failed, "connection closed before any response byte (" + r.detail + ")");
    }
    return Error(ErrorCode::truncated, "response head cut short (" + r.detail + ")");
}

std::optional<Error> ResponseReader::read_head() {
    HeadParser parser;
    for (;;) {
        if (used_ == have_)
            if (auto e = fill()) return e;
        std::size_t consumed = 0;
        auto status = parser.feed(std::string_view(buffer_ + used_, have_ - used_), consumed);
        used_ += consumed;
        if (status == HeadParser::Status::error)
            return Error(ErrorCode::protocol, "malformed response: " + parser.error());
        if (status == HeadParser::Status::need_more) continue;
        head_ = parser.take_head();
        if (head_.status >= 200) break;
        // Every 1xx is skipped: POCO skips only 100 (poco-1.11.md, "More traps").
        if (head_.status == 101) return Error(ErrorCode::protocol, "unexpected 101 Switching Protocols");
        parser.reset();
    }
    framer_.start(body_mode_for(head_), head_.content_length.value_or(0));
    return std::nullopt;
}

bool ResponseReader::reusable() const noexcept {
    // Bytes after the end of the response (we never pipeline) mean the stream is out of sync.
    return head_.keep_alive() && framer_.done() && framer_.mode() != BodyFramer::Mode::until_close &&
           used_ == have_;
}

ResponseReader::Piece ResponseReader::read_body_piece(std::string& out, Error& error) {
    for (;;) {
        if (framer_.done()) return Piece::end;
        if (used_ < have_) {
            std::size_t before = out.size();
            used_ += framer_.feed(buffer_ + used_, have_ - used_, out);
            if (framer_.failed()) {
                error = Error(ErrorCode::protocol, "malformed chunked body: " + framer_.error());
                return Piece::error;
            }
            if (out.size() > before) return Piece::data;
            continue;
        }
        IoResult r = connection_.read_some(buffer_, size_, params_.deadlines, params_.cancel);
        if (r.status == IoStatus::eof && framer_.complete_at_eof()) {
            if (framer_.mode() == BodyFramer::Mode::until_close) framer_.start(BodyFramer::Mode::none);
            return Piece::end;
        }
        if (r.status != IoStatus::ok) {
            error = Error(code_for(r.status),
                          is_timeout_or_cancel(r.status) ? "reading the body: " + r.detail
                                                         : "body cut short (" + r.detail + ")");
            return Piece::error;
        }
        have_ = r.bytes;
        used_ = 0;
    }
}

std::optional<Error> ResponseReader::read_whole_body(std::string& out, std::size_t limit) {
    auto too_large = [&](std::string what) {
        Error e(ErrorCode::too_large, std::move(what));
        e.status = head_.status;
        e.headers = head_.headers;
        return e;
    };
    if (framer_.mode() == BodyFramer::Mode::length) {
        std::uint64_t length = *head_.content_length;
        // Checked before reserving: a Content-Length alone never makes us allocate past the cap.
        if (length > limit)
            return too_large("response Content-Length " + std::to_string(length) + " exceeds the limit of " +
                             std::to_string(limit) + " bytes");
        // One allocation for the whole body; socket reads land in it directly.
        out.resize(static_cast<std::size_t>(length));
        std::size_t filled = std::min<std::size_t>(have_ - used_, static_cast<std::size_t>(length));
        std::memcpy(out.data(), buffer_ + used_, filled);
        used_ += filled;
        framer_.direct_received(filled);
        while (!framer_.done()) {
            IoResult r = connection_.read_some(out.data() + filled, out.size() - filled, params_.deadlines,
                                               params_.cancel);
            if (r.status != IoStatus::ok)
                return Error(code_for(r.status), is_timeout_or_cancel(r.status)
                                                     ? "reading the body: " + r.detail
                                                     : "body cut short: " + std::to_string(filled) + " of " +
                                                           std::to_string(length) + " bytes (" + r.detail + ")");
            filled += r.bytes;
            framer_.direct_received(r.bytes);
        }
        return std::nullopt;
    }
    if (framer_.mode() == BodyFramer::Mode::chunked) out.reserve(16 * 1024);
    for (;;) {
        Error error;
        switch (read_body_piece(out, error)) {
            case Piece::end: return std::nullopt;
            case Piece::error: return error;
            case Piece::data:
                if (out.size() > limit)
                    return too_large("response body exceeds the limit of " + std::to_string(limit) + " bytes");
                break;
        }
    }
}

ExchangeOutcome exchange(Connection& connection, const Url& url, std::string_view body, const Headers& headers,
                         const ExchangeParams& params) {
    ExchangeOutcome out;
    const auto start = Clock::now();
    // One read buffer per thread: the exchange runs start to end on the calling thread.
    constexpr std::size_t buffer_size = 64 * 1024;
    thread_local std::unique_ptr<char[]> buffer(new char[buffer_size]);
    ResponseReader reader(connection, params, buffer.get(), buffer_size);
    auto finish = [&](Error e) {
        out.any_response_byte = reader.any_response_byte();
        out.stale_connection = reader.stale_connection();
        out.error = std::move(e);
        return out;
    };
    if (auto e = reader.send(url, body, headers)) return finish(std::move(*e));
    if (auto e = reader.read_head()) return finish(std::move(*e));
    ResponseHead& head = reader.head();
    const bool success = head.status / 100 == 2;
    std::string response_body;
    if (auto e = reader.read_whole_body(response_body, success ? params.max_response_bytes
                                                               : params.max_error_body_bytes))
        return finish(std::move(*e));
    out.any_response_byte = true;
    out.reusable = reader.reusable();
    if (success) {
        Response response;
        response.status = head.status;
        response.http_version = head.http_version();
        response.timings.ttfb = micros(reader.first_byte() - start);
        response.timings.total = micros(Clock::now() - start);
        response.headers = std::move(head.headers);
        response.body = std::move(response_body);
        out.response = std::move(response);
        return out;
    }
    out.error = http_status_error(head, std::move(response_body));
    return out;
}

Error http_status_error(ResponseHead& head, std::string body) {
    Error e(ErrorCode::http_status,
            "HTTP " + std::to_string(head.status) + (head.reason.empty() ? "" : " " + head.reason));
    e.status = head.status;
    e.retry_after = parse_retry_hint(head.headers, body);
    e.headers = std::move(head.headers);
    e.body = std::move(body);
    return e;
}

}  // namespace nous::http::detail
