// URL parsing and validation, IP literals, redaction for -v and logs.

#include "core/url.hpp"

#include <charconv>

#include "core/strings.hpp"
#include "nous/http/client.hpp"

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
    return scheme() + "://" + (host_is_ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {

bool is_hex(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

// Written out (not inet_pton) so that this layer needs no socket headers.
bool is_ipv4_literal(std::string_view text) noexcept {
    int parts = 0;
    while (true) {
        std::size_t digits = 0;
        unsigned value = 0;
        while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
            value = value * 10 + static_cast<unsigned>(text[digits] - '0');
            if (++digits > 3) return false;
        }
        // inet_pton: 1 to 3 digits, at most 255, no leading zero.
        if (digits == 0 || value > 255 || (digits > 1 && text[0] == '0')) return false;
        ++parts;
        text.remove_prefix(digits);
        if (text.empty()) return parts == 4;
        if (text[0] != '.' || parts == 4) return false;
        text.remove_prefix(1);
    }
}

bool is_ipv6_literal(std::string_view text) noexcept {
    if (text.empty()) return false;
    auto gap = text.find("::");
    if (gap != std::string_view::npos && text.find("::", gap + 1) != std::string_view::npos)
        return false;
    // Counts the 16-bit groups of one side of "::"; an IPv4 tail counts as two.
    auto groups = [](std::string_view side, bool may_end_in_ipv4, int& count) {
        if (side.empty()) return true;
        while (true) {
            auto colon = side.find(':');
            std::string_view group = side.substr(0, colon);
            if (colon == std::string_view::npos && may_end_in_ipv4 &&
                group.find('.') != std::string_view::npos) {
                if (!is_ipv4_literal(group)) return false;
                count += 2;
                return true;
            }
            if (group.empty() || group.size() > 4) return false;
            for (char c : group)
                if (!is_hex(c)) return false;
            ++count;
            if (colon == std::string_view::npos) return true;
            side.remove_prefix(colon + 1);
        }
    };
    int count = 0;
    if (gap == std::string_view::npos) return groups(text, true, count) && count == 8;
    return groups(text.substr(0, gap), false, count) && groups(text.substr(gap + 2), true, count) &&
           count <= 7;
}

bool is_ip_literal(std::string_view host) { return is_ipv4_literal(host) || is_ipv6_literal(host); }

Result<Url> parse_url(std::string_view text) {
    for (unsigned char c : text)
        if (c <= 0x20 || c == 0x7f) return bad_url("contains whitespace or a control character");
    Url url;
    auto sep = text.find("://");
    if (sep == std::string_view::npos)
        return bad_url("missing scheme (expected http:// or https://)");
    // Compared without a lower-cased copy: this runs on every call.
    const std::string_view scheme = text.substr(0, sep);
    if (ascii_iequals(scheme, "https"))
        url.https = true;
    else if (!ascii_iequals(scheme, "http"))
        return bad_url("unsupported scheme (expected http or https)");
    std::string_view rest = text.substr(sep + 3);
    // One pass (string_view::find_first_of makes a memchr per character).
    std::size_t path_at = 0;
    while (path_at < rest.size() && rest[path_at] != '/' && rest[path_at] != '?' &&
           rest[path_at] != '#')
        ++path_at;
    if (path_at == rest.size()) path_at = std::string_view::npos;
    std::string_view authority = rest.substr(0, path_at);
    std::string_view target =
        path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);
    if (auto frag = target.find('#'); frag != std::string_view::npos)
        target = target.substr(0, frag);
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
        if (!is_ipv6_literal(host)) return bad_url("bad IPv6 address");
    } else {
        auto colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (host.empty()) return bad_url("missing host");
    for (char c : host)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_' || c == ':' || c == '%'))
            return bad_url("bad character in host");
    url.host = to_lower(host);
    url.port = url.https ? 443 : 80;
    if (authority.find(':') != std::string_view::npos && !url.host_is_ipv6 && port_text.empty())
        return bad_url("empty port");
    if (!port_text.empty()) {
        unsigned value = 0;
        auto [end, ec] =
            std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
            value > 65535)
            // Never quoted: in "https://user:secret/x@host" the text before the
            // first '/' reads as host:port, and the "port" is a password.
            return bad_url("bad port (a number from 1 to 65535 after the host)");
        url.port = static_cast<std::uint16_t>(value);
    }
    url.target = target.empty() ? "/" : std::string(target);
    if (url.target.front() == '?') url.target.insert(url.target.begin(), '/');
    return url;
}

namespace {

/// The URL without its `user:pass@` part, marked as redacted.
std::string redact_userinfo(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::string(url);
    const auto auth_start = scheme_end + 3;
    const auto auth_end = url.find_first_of("/?#", auth_start);
    std::string_view authority = url.substr(auth_start, auth_end - auth_start);
    auto at = authority.rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    return std::string(url.substr(0, auth_start)) + "[REDACTED]@" +
           std::string(url.substr(auth_start + at + 1));
}

}  // namespace

namespace {

/// Query parameters that carry credentials in practice (Gemini's `key`,
/// `api_key` of many gateways, OAuth's `access_token`, signed URLs' `sig`).
bool is_secret_parameter(std::string_view name) {
    static constexpr std::string_view secret[] = {"key",          "api_key", "apikey", "api-key",
                                                  "access_token", "token",   "sig",    "signature",
                                                  "password",     "secret"};
    for (std::string_view s : secret)
        if (ascii_iequals(name, s)) return true;
    return false;
}

}  // namespace

std::string redact_url(std::string_view url_text) {
    const std::string without_credentials = redact_userinfo(url_text);
    std::string_view url = without_credentials;
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
        if (eq != std::string_view::npos && is_secret_parameter(param.substr(0, eq)))
            out += std::string(param.substr(0, eq)) + "=[REDACTED]";
        else
            out += param;
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return out;
}

std::string url_for_log(std::string_view url) {
    // A URL that does not parse may hold a password where the parser saw a
    // host or a port ("https://user:secret/x@host"): only its scheme is logged.
    auto parsed = parse_url(url);
    if (!parsed) return "[invalid URL]";
    std::string_view target = parsed->target;
    return parsed->scheme() + "://" + parsed->host_header() +
           std::string(target.substr(0, target.find('?')));
}

}  // namespace nous::http::detail

namespace nous::http {

std::optional<Error> validate_url(std::string_view url) {
    auto parsed = detail::parse_url(url);
    if (!parsed) return parsed.error();
    return std::nullopt;
}

std::string redact_url(std::string_view url) { return detail::redact_url(url); }

}  // namespace nous::http
