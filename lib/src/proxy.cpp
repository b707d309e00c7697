#include "proxy.hpp"


#include "internal.hpp"

namespace nous::http::detail {

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
        if (!entry.empty() && entry.front() == '[' && entry.back() == ']') entry = entry.substr(1, entry.size() - 2);
        if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
        if (h == entry) return true;
        if (h.size() > entry.size() && h.compare(h.size() - entry.size(), entry.size(), entry) == 0 &&
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
    if (!parsed) return Error(ErrorCode::invalid_argument, "proxy from the environment: " + parsed.error().message);
    if (parsed->https)
        return Error(ErrorCode::invalid_argument, "https:// proxies are not supported (use an http:// proxy)");
    return proxy;
}

}  // namespace nous::http::detail
