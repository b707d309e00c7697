#include "url.hpp"

#include <arpa/inet.h>

#include <charconv>

#include "internal.hpp"

namespace nous::http::detail {

namespace {
Error bad_url(std::string_view why) {
    return Error(ErrorCode::invalid_argument, "invalid URL: " + std::string(why));
}
}  // namespace

std::string Url::host_header() const {
    std::string h = host_is_ipv6 ? "[" + host + "]" : host;
    if (port != (https ? 443 : 80)) h += ":" + std::to_string(port);
    return h;
}

std::string Url::origin() const {
    return scheme() + "://" + (host_is_ipv6 ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

bool is_ip_literal(std::string_view host) {
    std::string h(host);
    unsigned char buf[16];
    return inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1;
}

Result<Url> parse_url(std::string_view text) {
    for (unsigned char c : text)
        if (c <= 0x20 || c == 0x7f) return bad_url("contains whitespace or a control character");
    Url url;
    auto sep = text.find("://");
    if (sep == std::string_view::npos) return bad_url("missing scheme (expected http:// or https://)");
    std::string scheme = to_lower(text.substr(0, sep));
    if (scheme == "https")
        url.https = true;
    else if (scheme != "http")
        return bad_url("unsupported scheme '" + scheme + "' (expected http or https)");
    std::string_view rest = text.substr(sep + 3);
    auto path_at = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, path_at);
    std::string_view target =
        path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);
    if (auto frag = target.find('#'); frag != std::string_view::npos) target = target.substr(0, frag);
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        url.userinfo = std::string(authority.substr(0, at));
        authority = authority.substr(at + 1);
    }
    std::string_view host, port_text;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return bad_url("unterminated IPv6 address");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad_url("junk after IPv6 address");
            port_text = after.substr(1);
        }
        url.host_is_ipv6 = true;
        unsigned char buf[16];
        if (inet_pton(AF_INET6, std::string(host).c_str(), buf) != 1)
            return bad_url("bad IPv6 address");
    } else {
        auto colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (host.empty()) return bad_url("missing host");
    for (char c : host)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
              c == ':' || c == '%'))
            return bad_url("bad character in host");
    url.host = to_lower(host);
    url.port = url.https ? 443 : 80;
    if (authority.find(':') != std::string_view::npos && !url.host_is_ipv6 && port_text.empty())
        return bad_url("empty port");
    if (!port_text.empty()) {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
            value > 65535)
            return bad_url("bad port '" + std::string(port_text) + "'");
        url.port = static_cast<std::uint16_t>(value);
    }
    url.target = target.empty() ? "/" : std::string(target);
    if (url.target.front() == '?') url.target.insert(url.target.begin(), '/');
    return url;
}

std::string redact_url(std::string_view url) {
    auto q = url.find('?');
    if (q == std::string_view::npos) return std::string(url);
    std::string out(url.substr(0, q + 1));
    std::string_view query = url.substr(q + 1);
    bool first = true;
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view param = query.substr(0, amp);
        if (!first) out += '&';
        first = false;
        auto eq = param.find('=');
        if (eq != std::string_view::npos && to_lower(param.substr(0, eq)) == "key")
            out += std::string(param.substr(0, eq)) + "=[REDACTED]";
        else
            out += param;
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return out;
}

std::string url_for_log(std::string_view url) {
    auto cut = url.find_first_of("?#");
    std::string_view base = url.substr(0, cut);
    // Never log credentials in the authority either.
    auto scheme_end = base.find("://");
    if (scheme_end != std::string_view::npos) {
        auto auth_start = scheme_end + 3;
        auto auth_end = base.find('/', auth_start);
        std::string_view authority = base.substr(auth_start, auth_end - auth_start);
        if (auto at = authority.rfind('@'); at != std::string_view::npos)
            return std::string(base.substr(0, auth_start)) + std::string(base.substr(auth_start + at + 1));
    }
    return std::string(base);
}

}  // namespace nous::http::detail
