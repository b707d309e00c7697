// Proxy choice from the environment (https_proxy, http_proxy, no_proxy) and Basic credentials.

#include "core/proxy.hpp"

#include "core/strings.hpp"

namespace nous::http::detail {

namespace {

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
            hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string base64(std::string_view in) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                     (static_cast<unsigned char>(in[i + 1]) << 8) |
                     static_cast<unsigned char>(in[i + 2]);
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += alphabet[v & 63];
    }
    if (i < in.size()) {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < in.size() ? alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

}  // namespace

std::string basic_auth(std::string_view userinfo) {
    return "Basic " + base64(percent_decode(userinfo));
}

bool no_proxy_matches(std::string_view list, std::string_view host, std::uint16_t port) {
    std::string h = to_lower(host);
    while (!list.empty()) {
        auto comma = list.find(',');
        std::string entry = to_lower(trim(list.substr(0, comma)));
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
        if (entry.empty()) continue;
        if (entry == "*") return true;
        // Optional ":port" (not for bracketless IPv6 entries).
        if (auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon) {
            if (entry.substr(colon + 1) != std::to_string(port)) continue;
            entry.resize(colon);
        }
        if (!entry.empty() && entry.front() == '[' && entry.back() == ']')
            entry = entry.substr(1, entry.size() - 2);
        if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
        if (h == entry) return true;
        if (h.size() > entry.size() &&
            h.compare(h.size() - entry.size(), entry.size(), entry) == 0 &&
            h[h.size() - entry.size() - 1] == '.')
            return true;
    }
    return false;
}

Result<std::string> proxy_for(const Url& url, const EnvSnapshot& env) {
    const char* value = url.https ? env.https_proxy : env.http_proxy;
    if (!value) return std::string();
    if (env.no_proxy && no_proxy_matches(env.no_proxy, url.host, url.port)) return std::string();
    std::string proxy = value;
    if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
    auto parsed = parse_url(proxy);
    if (!parsed)
        return Error(ErrorCode::invalid_argument,
                     "proxy from the environment: " + parsed.error().message);
    if (parsed->https)
        return Error(ErrorCode::invalid_argument,
                     "https:// proxies are not supported (use an http:// proxy)");
    return proxy;
}

}  // namespace nous::http::detail
