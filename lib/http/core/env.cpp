// The environment variables a call reads, in one snapshot.

#include "core/env.hpp"

#include <unistd.h>

#include <cstring>

namespace nous::http::detail {

namespace {
/// If `entry` is "NAME=value" with a non-empty value, returns the value.
const char* match(const char* entry, const char* name, std::size_t length) {
    if (std::strncmp(entry, name, length) != 0 || entry[length] != '=' || entry[length + 1] == '\0')
        return nullptr;
    return entry + length + 1;
}
#define NOUS_MATCH(entry, literal) match(entry, literal, sizeof(literal) - 1)
}  // namespace

EnvSnapshot read_env() noexcept {
    EnvSnapshot env;
    const char* upper_https = nullptr;
    const char* upper_no = nullptr;
    for (char** e = environ; e && *e; ++e) {
        const char* entry = *e;
        const char* v = nullptr;
        switch (entry[0]) {
            case 'N':
                if ((v = NOUS_MATCH(entry, "NOUS_HTTP_BACKEND")))
                    env.http_backend = v;
                else if ((v = NOUS_MATCH(entry, "NOUS_HTTP_STREAM_BACKEND")))
                    env.http_stream_backend = v;
                else if ((v = NOUS_MATCH(entry, "NOUS_HTTP_CONFIG")))
                    env.http_config = v;
                else if ((v = NOUS_MATCH(entry, "NOUS_HTTP_WINDOW_RELAY")))
                    env.http_window_relay = v;
                else if ((v = NOUS_MATCH(entry, "NO_PROXY")))
                    upper_no = v;
                break;
            case 'h':
                if ((v = NOUS_MATCH(entry, "http_proxy")))
                    env.http_proxy = v;
                else if ((v = NOUS_MATCH(entry, "https_proxy")))
                    env.https_proxy = v;
                break;
            case 'H':
                if ((v = NOUS_MATCH(entry, "HTTPS_PROXY"))) upper_https = v;
                break;
            case 'n':
                if ((v = NOUS_MATCH(entry, "no_proxy"))) env.no_proxy = v;
                break;
            default:
                break;
        }
    }
    if (!env.https_proxy) env.https_proxy = upper_https;
    if (!env.no_proxy) env.no_proxy = upper_no;
    return env;
}

}  // namespace nous::http::detail
