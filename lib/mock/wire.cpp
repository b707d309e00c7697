// The mock server's side of HTTP/1.1 on a raw socket.

#include "wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

namespace nous::http::mock {

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string reason_for(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 204:
            return "No Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 408:
            return "Request Timeout";
        case 413:
            return "Content Too Large";
        case 429:
            return "Too Many Requests";
        case 500:
            return "Internal Server Error";
        case 503:
            return "Service Unavailable";
        case 529:
            return "Overloaded";  // Anthropic's
        default:
            return "Status";
    }
}

namespace {

/// One more read into `buffer`; false at EOF or an error.
bool read_more(int fd, std::string& buffer) {
    char chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
}

/// The end of the line starting at `at` (its CR), read as needed; npos at
/// EOF or past 4 KiB of line (a chunk-size line or a trailer).
std::size_t find_line_end(int fd, std::string& buffer, std::size_t at) {
    for (;;) {
        const std::size_t eol = buffer.find("\r\n", at);
        if (eol != std::string::npos) return eol;
        if (buffer.size() - at > 4096 || !read_more(fd, buffer)) return std::string::npos;
    }
}

/// A chunked body from `buffer[at]` into `body`; `at` ends past its last
/// chunk and trailers (which are read and dropped).
ReadRequest read_chunked(int fd, std::string& buffer, std::size_t& at, std::string& body,
                         std::uint64_t max_body, std::string& why) {
    for (;;) {
        std::size_t eol = find_line_end(fd, buffer, at);
        if (eol == std::string::npos) return ReadRequest::closed;
        std::string_view size_line(buffer.data() + at, eol - at);
        size_line = size_line.substr(0, size_line.find(';'));  // chunk extensions
        while (!size_line.empty() && (size_line.back() == ' ' || size_line.back() == '\t'))
            size_line.remove_suffix(1);
        std::uint64_t size = 0;
        const auto [end, ec] =
            std::from_chars(size_line.data(), size_line.data() + size_line.size(), size, 16);
        if (size_line.empty() || ec != std::errc() || end != size_line.data() + size_line.size()) {
            why = "a chunk size that is not hexadecimal";
            return ReadRequest::malformed;
        }
        at = eol + 2;
        if (size == 0) {
            for (;;) {  // trailers, up to the empty line
                eol = find_line_end(fd, buffer, at);
                if (eol == std::string::npos) return ReadRequest::closed;
                const bool last = eol == at;
                at = eol + 2;
                if (last) return ReadRequest::request;
            }
        }
        if (size > max_body - body.size()) return ReadRequest::too_large;
        while (buffer.size() - at < size + 2)
            if (!read_more(fd, buffer)) return ReadRequest::closed;
        if (buffer.compare(at + size, 2, "\r\n") != 0) {
            why = "a chunk not ended by CRLF";
            return ReadRequest::malformed;
        }
        body.append(buffer, at, size);
        at += size + 2;
    }
}

}  // namespace

ReadRequest read_request(int fd, std::string& buffer, MockRequest& request,
                         std::chrono::milliseconds idle_close, std::uint64_t max_body,
                         std::string& why) {
    std::size_t head_end;
    for (;;) {
        // Empty lines before a request line are ignored (RFC 9112 2.2).
        const std::size_t start = buffer.find_first_not_of("\r\n");
        buffer.erase(0, start == std::string::npos ? buffer.size() : start);
        // A request starts with its method's upper-case letters: anything
        // else (a TLS ClientHello) waited for a head that never came.
        if (!buffer.empty() && !(buffer.front() >= 'A' && buffer.front() <= 'Z')) {
            why = buffer.front() == '\x16'
                      ? "a TLS handshake: the mock speaks plain HTTP (http://, not https://)"
                      : "not an HTTP/1.1 request";
            return ReadRequest::malformed;
        }
        head_end = buffer.find("\r\n\r\n");
        if (head_end != std::string::npos) break;
        if (buffer.size() > (1 << 20)) return ReadRequest::closed;
        if (idle_close.count() > 0 && buffer.empty()) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(idle_close.count())) == 0)
                return ReadRequest::closed;
        }
        if (!read_more(fd, buffer)) return ReadRequest::closed;
    }
    std::string_view head(buffer.data(), head_end);
    auto line_end = head.find("\r\n");
    std::string_view request_line = head.substr(0, line_end);
    auto sp1 = request_line.find(' ');
    auto sp2 = request_line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return ReadRequest::closed;
    request.method = std::string(request_line.substr(0, sp1));
    request.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
    request.headers.clear();
    std::uint64_t content_length = 0;
    bool length_ok = true, has_length = false;
    std::string coding;  // Transfer-Encoding, lower-case
    std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
    while (!rest.empty()) {
        auto eol = rest.find("\r\n");
        std::string_view line = rest.substr(0, eol);
        rest = eol == std::string_view::npos ? "" : rest.substr(eol + 2);
        auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string name = lower(std::string(line.substr(0, colon)));
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        if (name == "transfer-encoding") coding = lower(std::string(value));
        if (name == "content-length") {
            has_length = true;
            const auto [end, ec] =
                std::from_chars(value.data(), value.data() + value.size(), content_length);
            const bool digits = !value.empty() && end == value.data() + value.size();
            if (digits && ec == std::errc::result_out_of_range)
                content_length = ~std::uint64_t{0};  // a number, past any cap
            else
                length_ok = digits && ec == std::errc();
        }
        request.headers.emplace_back(std::move(name), std::string(value));
    }
    if (!coding.empty()) {
        if (coding != "chunked") {
            why = "Transfer-Encoding '" + coding + "' (the mock reads chunked only)";
            return ReadRequest::malformed;
        }
        if (has_length) {
            why = "both Transfer-Encoding and Content-Length";
            return ReadRequest::malformed;
        }
        std::size_t at = head_end + 4;
        request.body.clear();
        const ReadRequest got = read_chunked(fd, buffer, at, request.body, max_body, why);
        if (got == ReadRequest::request) buffer.erase(0, at);
        return got;
    }
    if (!length_ok) {
        why = "a Content-Length that is not a number";
        return ReadRequest::malformed;
    }
    // Refused before any sum with it: 18446744073709551545 wrapped
    // body_start + content_length, and the request was served for ever.
    if (content_length > max_body) return ReadRequest::too_large;
    const std::size_t body_start = head_end + 4;
    const auto length = static_cast<std::size_t>(content_length);
    while (buffer.size() - body_start < length)
        if (!read_more(fd, buffer)) return ReadRequest::closed;
    request.body = buffer.substr(body_start, length);
    buffer.erase(0, body_start + length);
    return ReadRequest::request;
}

bool write_response(int fd, int status,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    std::string_view body, bool nagle) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason_for(status) + "\r\n";
    bool has_type = false;
    for (const auto& [k, v] : headers) {
        head += k + ": " + v + "\r\n";
        if (lower(k) == "content-type") has_type = true;
    }
    if (!has_type) head += "Content-Type: application/json\r\n";
    bool no_body = status == 204 || status == 304 || status < 200;
    if (!no_body) head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    head += "\r\n";
    if (nagle) {
        // Two writes with Nagle on: the body waits for the client's ACK of the head.
        if (!send_all(fd, head)) return false;
        return no_body || send_all(fd, body);
    }
    if (no_body) return send_all(fd, head);
    // Head and body in one sendmsg, whatever the size.
    iovec parts[2] = {{head.data(), head.size()}, {const_cast<char*>(body.data()), body.size()}};
    std::size_t total = head.size() + body.size(), sent = 0;
    while (sent < total) {
        msghdr msg{};
        msg.msg_iov = parts;
        msg.msg_iovlen = 2;
        ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        sent += static_cast<std::size_t>(n);
        if (sent >= total) break;
        // Advance the iovecs past what was sent.
        std::size_t skip = static_cast<std::size_t>(n);
        for (auto& part : parts) {
            std::size_t take = std::min(skip, part.iov_len);
            part.iov_base = static_cast<char*>(part.iov_base) + take;
            part.iov_len -= take;
            skip -= take;
        }
    }
    return true;
}

bool write_chunk(int fd, std::string_view data, bool last) {
    if (data.empty()) return !last || send_all(fd, "0\r\n\r\n");  // a 0-size chunk is the end
    char size[32];
    int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string frame;
    frame.reserve(data.size() + 40);
    frame.append(size, static_cast<std::size_t>(n));
    frame.append(data);
    frame += last ? "\r\n0\r\n\r\n" : "\r\n";
    return send_all(fd, frame);
}

}  // namespace nous::http::mock
