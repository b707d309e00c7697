// The request head we send: request line, Host, framing, defaults, headers.

#include "codec/request_head.hpp"

#include "nous/http/client.hpp"

namespace nous::http::detail {

std::string serialize_request_head(const Url& url, std::size_t body_size, const Headers& headers,
                                   bool absolute_form, const std::string& proxy_authorization,
                                   const Headers& extra, std::string_view method) {
    bool has_host = false, has_type = false, has_agent = false;
    std::size_t size = 128 + url.target.size() + url.host.size();
    for (const auto& [k, v] : extra) size += k.size() + v.size() + 4;
    for (const auto& [k, v] : headers) {
        size += k.size() + v.size() + 4;
        has_host |= header_name_equals(k, "host");
        has_type |= header_name_equals(k, "content-type");
        has_agent |= header_name_equals(k, "user-agent");
    }
    std::string head;
    head.reserve(size);
    head += method;
    head += ' ';
    if (absolute_form) head += url.scheme() + "://" + url.host_header();
    head += url.target;
    head += " HTTP/1.1\r\n";
    if (!has_host) head += "Host: " + url.host_header() + "\r\n";
    // Always a Content-Length: without one POCO-style servers half-close
    // and keep-alive dies (docs/design/poco-traps.md#keep-alive).
    head += "Content-Length: " + std::to_string(body_size) + "\r\n";
    if (!has_type) head += "Content-Type: application/json\r\n";
    if (!has_agent) head += "User-Agent: nous-http/0.1\r\n";
    if (!proxy_authorization.empty())
        head += "Proxy-Authorization: " + proxy_authorization + "\r\n";
    for (const auto& [k, v] : extra) {
        head += k;
        head += ": ";
        head += v;
        head += "\r\n";
    }
    for (const auto& [k, v] : headers) {
        // Framing is ours: a caller's Content-Length or Transfer-Encoding was
        // validated (and is dropped) in post().
        if (header_name_equals(k, "content-length") || header_name_equals(k, "transfer-encoding"))
            continue;
        head += k;
        head += ": ";
        head += v;
        head += "\r\n";
    }
    head += "\r\n";
    return head;
}

}  // namespace nous::http::detail
