// The router's shared_state URL (redis_url.hpp).

#include "router/redis_url.hpp"

#include <charconv>
#include <string_view>

#include "platforms/percent_encoding.hpp"

namespace nous::llm::detail {

namespace {

constexpr std::string_view kScheme = "redis://";

/// Where the user information ends (its '@'), or npos: the last '@' before
/// the path, since a password may hold '@' but the host cannot.
std::size_t userinfo_end(std::string_view rest) { return rest.rfind('@'); }

}  // namespace

std::string redact_redis_url(const std::string& url) {
    if (url.rfind(kScheme, 0) != 0) return url;
    const std::string_view rest = std::string_view(url).substr(kScheme.size());
    const std::size_t at = userinfo_end(rest);
    if (at == std::string_view::npos) return url;
    const std::string_view userinfo = rest.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    const std::string_view user = colon == std::string_view::npos ? "" : userinfo.substr(0, colon);
    return std::string(kScheme) + std::string(user) + ":***@" + std::string(rest.substr(at + 1));
}

bool parse_redis_url(const std::string& url, RedisUrl& out, std::string& error) {
    out = RedisUrl{};
    const std::string shown = redact_redis_url(url);
    const std::string shape = "redis://[USER:PASSWORD@]HOST:PORT[/DB]";
    if (url.rfind(kScheme, 0) != 0) {
        error = "shared_state must be " + shape;
        return false;
    }
    std::string_view rest = std::string_view(url).substr(kScheme.size());
    if (const std::size_t at = userinfo_end(rest); at != std::string_view::npos) {
        const std::string_view userinfo = rest.substr(0, at);
        const std::size_t colon = userinfo.find(':');
        if (colon == std::string_view::npos) {
            error = "shared_state: the user information of " + shown +
                    " has no ':' before the password (" + shape + ")";
            return false;
        }
        if (!percent_decode(userinfo.substr(0, colon), out.user) ||
            !percent_decode(userinfo.substr(colon + 1), out.password)) {
            error = "shared_state: a broken %-escape in the user or password of " + shown;
            return false;
        }
        if (out.password.empty()) {
            error = "shared_state: an empty password in " + shown;
            return false;
        }
        rest.remove_prefix(at + 1);
    }
    if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
        const std::string_view db = rest.substr(slash + 1);
        auto [end, ec] = std::from_chars(db.data(), db.data() + db.size(), out.db);
        if (db.empty() || ec != std::errc() || end != db.data() + db.size() || out.db < 0) {
            error = "shared_state: bad database number in " + shown;
            return false;
        }
        rest = rest.substr(0, slash);
    }
    if (const std::size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
        const std::string_view port = rest.substr(colon + 1);
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
        if (ec != std::errc() || end != port.data() + port.size() || out.port < 1 ||
            out.port > 65535) {
            error = "shared_state: bad port in " + shown;
            return false;
        }
        rest = rest.substr(0, colon);
    }
    if (rest.empty()) {
        error = "shared_state: no host in " + shown;
        return false;
    }
    out.host = std::string(rest);
    out.redacted = shown;
    return true;
}

}  // namespace nous::llm::detail
