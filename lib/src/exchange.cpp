#include "exchange.hpp"

#include <rapidjson/document.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>

#include "http1_parser.hpp"

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

ExchangeOutcome exchange(Connection& connection, const Url& url, std::string_view body,
                         const Headers& headers, const ExchangeParams& params) {
    ExchangeOutcome out;
    const auto start = Clock::now();
    const std::string head = serialize_request_head(url, body.size(), headers, connection.absolute_form(),
                                                    params.proxy_authorization);
    IoResult w = connection.write_all(head, body, params.deadlines, params.cancel);
    if (w.status != IoStatus::ok) {
        out.stale_connection = w.status == IoStatus::reset;
        out.error = is_timeout_or_cancel(w.status)
                        ? Error(code_for(w.status), "sending the request: " + w.detail)
                        : Error(ErrorCode::connect_failed, "sending the request: " + w.detail);
        return out;
    }

    // ---- status line and headers (every 1xx skipped: POCO skips only 100) ----
    // One read buffer per thread: the exchange runs start to end on the calling thread.
    constexpr std::size_t buffer_size = 64 * 1024;
    thread_local std::unique_ptr<char[]> buffer(new char[buffer_size]);
    HeadParser head_parser;
    std::size_t have = 0, used = 0;  // unread bytes are buffer[used, have)
    Clock::time_point first_byte{};
    ResponseHead response_head;
    for (;;) {
        if (used == have) {
            IoResult r = connection.read_some(buffer.get(), buffer_size, params.deadlines, params.cancel);
            if (r.status != IoStatus::ok) {
                if (is_timeout_or_cancel(r.status)) {
                    out.error = Error(code_for(r.status), "waiting for the response: " + r.detail);
                } else if (!out.any_response_byte) {
                    out.stale_connection = r.status == IoStatus::eof || r.status == IoStatus::reset ||
                                           r.status == IoStatus::tls_eof;
                    out.error = Error(ErrorCode::connect_failed,
                                      "connection closed before any response byte (" + r.detail + ")");
                } else {
                    out.error = Error(ErrorCode::truncated, "response head cut short (" + r.detail + ")");
                }
                return out;
            }
            if (!out.any_response_byte) first_byte = Clock::now();
            out.any_response_byte = true;
            have = r.bytes;
            used = 0;
        }
        std::size_t consumed = 0;
        auto status = head_parser.feed(std::string_view(buffer.get() + used, have - used), consumed);
        used += consumed;
        if (status == HeadParser::Status::error) {
            out.error = Error(ErrorCode::protocol, "malformed response: " + head_parser.error());
            return out;
        }
        if (status == HeadParser::Status::need_more) continue;
        response_head = head_parser.take_head();
        if (response_head.status >= 200) break;
        if (response_head.status == 101) {
            out.error = Error(ErrorCode::protocol, "unexpected 101 Switching Protocols");
            return out;
        }
        head_parser.reset();
    }

    // ---- body ----
    const bool success = response_head.status / 100 == 2;
    const std::size_t limit = success ? params.max_response_bytes : params.max_error_body_bytes;
    auto mode = body_mode_for(response_head);
    BodyFramer framer;
    std::string response_body;
    auto too_large = [&](std::string what) {
        Error e(ErrorCode::too_large, std::move(what));
        e.status = response_head.status;
        e.headers = response_head.headers;
        out.error = std::move(e);
        return out;
    };
    if (mode == BodyFramer::Mode::length) {
        std::uint64_t length = *response_head.content_length;
        // Checked before reserving: a Content-Length alone never makes us allocate past the cap.
        if (length > limit)
            return too_large("response Content-Length " + std::to_string(length) + " exceeds the limit of " +
                             std::to_string(limit) + " bytes");
        framer.start(mode, length);
        // One allocation for the whole body; socket reads land in it directly.
        response_body.resize(static_cast<std::size_t>(length));
        std::size_t filled = std::min<std::size_t>(have - used, static_cast<std::size_t>(length));
        std::memcpy(response_body.data(), buffer.get() + used, filled);
        used += filled;
        framer.direct_received(filled);
        while (!framer.done()) {
            IoResult r = connection.read_some(response_body.data() + filled, response_body.size() - filled,
                                              params.deadlines, params.cancel);
            if (r.status != IoStatus::ok) {
                out.error = Error(code_for(r.status),
                                  is_timeout_or_cancel(r.status)
                                      ? "reading the body: " + r.detail
                                      : "body cut short: " + std::to_string(filled) + " of " +
                                            std::to_string(length) + " bytes (" + r.detail + ")");
                return out;
            }
            filled += r.bytes;
            framer.direct_received(r.bytes);
        }
    } else {
        framer.start(mode);
        if (mode == BodyFramer::Mode::length || mode == BodyFramer::Mode::chunked)
            response_body.reserve(16 * 1024);
        for (;;) {
            if (used < have) {
                used += framer.feed(buffer.get() + used, have - used, response_body);
                if (framer.failed()) {
                    out.error = Error(ErrorCode::protocol, "malformed chunked body: " + framer.error());
                    return out;
                }
                if (response_body.size() > limit)
                    return too_large("response body exceeds the limit of " + std::to_string(limit) + " bytes");
            }
            if (framer.done()) break;
            IoResult r = connection.read_some(buffer.get(), buffer_size, params.deadlines, params.cancel);
            if (r.status == IoStatus::eof && framer.complete_at_eof()) break;
            if (r.status != IoStatus::ok) {
                out.error = Error(code_for(r.status), is_timeout_or_cancel(r.status)
                                                          ? "reading the body: " + r.detail
                                                          : "body cut short after " +
                                                                std::to_string(response_body.size()) +
                                                                " bytes (" + r.detail + ")");
                return out;
            }
            have = r.bytes;
            used = 0;
        }
    }
    // Bytes after the end of the response (we never pipeline): the stream is out of sync.
    out.reusable = response_head.keep_alive() && framer.done() && mode != BodyFramer::Mode::until_close &&
                   used == have;

    Response response;
    response.status = response_head.status;
    response.http_version = response_head.http_version();
    response.timings.ttfb = micros(first_byte - start);
    response.timings.total = micros(Clock::now() - start);
    if (success) {
        response.headers = std::move(response_head.headers);
        response.body = std::move(response_body);
        out.response = std::move(response);
        return out;
    }
    Error e(ErrorCode::http_status, "HTTP " + std::to_string(response_head.status) +
                                        (response_head.reason.empty() ? "" : " " + response_head.reason));
    e.status = response_head.status;
    e.retry_after = parse_retry_hint(response_head.headers, response_body);
    e.headers = std::move(response_head.headers);
    e.body = std::move(response_body);
    out.error = std::move(e);
    return out;
}

}  // namespace nous::http::detail
