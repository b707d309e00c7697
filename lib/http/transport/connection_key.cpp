// The pool key's two views: the text that names its pool, and the match a
// thread's cached pool is checked with.

#include "transport/connection_key.hpp"

namespace nous::http::detail {

ConnectionKey ConnectionKey::for_call(const Url& origin, const std::string& proxy,
                                      const Options& options) {
    return ConnectionKey{origin,
                         proxy,
                         options.ca_file,
                         options.insecure,
                         options.receive_buffer_bytes,
                         options.tcp_nodelay};
}

bool ConnectionKey::matches(const Url& url, const std::string& call_proxy,
                            const Options& options) const noexcept {
    // The origin is scheme, host and port (not the path or userinfo).
    return origin.https == url.https && origin.port == url.port && origin.host == url.host &&
           proxy == call_proxy && ca_file == options.ca_file && insecure == options.insecure &&
           receive_buffer_bytes == options.receive_buffer_bytes &&
           tcp_nodelay == options.tcp_nodelay;
}

std::string ConnectionKey::to_string() const {
    std::string k = origin.origin();
    k += "|proxy=" + proxy;
    k += "|ca=" + ca_file;
    k += insecure ? "|insecure" : "|verify";
    k += "|rcvbuf=" + std::to_string(receive_buffer_bytes);
    k += tcp_nodelay ? "|nodelay" : "|nagle";
    return k;
}

}  // namespace nous::http::detail
