// CONNECT through an HTTP proxy.

#include "transport/proxy_tunnel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "codec/http1_parser.hpp"
#include "core/proxy.hpp"
#include "transport/io_wait.hpp"

namespace nous::http::detail {

std::optional<Error> open_tunnel(Poco::Net::StreamSocket& socket, const ConnectionKey& key,
                                 const Url& proxy, const Deadlines& deadlines,
                                 const CancelToken* cancel) {
    int fd = socket.impl()->sockfd();
    std::string authority =
        (key.origin.host_is_ipv6 ? "[" + key.origin.host + "]" : key.origin.host) + ":" +
        std::to_string(key.origin.port);
    std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!proxy.userinfo.empty())
        request += "Proxy-Authorization: " + basic_auth(proxy.userinfo) + "\r\n";
    request += "\r\n";
    Deadlines connect_phase = deadlines;
    connect_phase.total_by = deadlines.connect_limit();
    std::size_t sent = 0;
    while (sent < request.size()) {
        if (wait_fd(fd, POLLOUT, connect_phase, Clock::time_point::max()) != IoStatus::ok)
            return Error(deadlines.connect_timeout_code(),
                         "timed out writing CONNECT to the proxy");
        ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return Error(ErrorCode::connect_failed,
                         std::string("proxy CONNECT: ") + std::strerror(errno));
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    HeadParser parser;
    char buf[4096];
    for (;;) {
        IoStatus w = wait_fd(fd, POLLIN, connect_phase, Clock::time_point::max());
        if (is_cancelled(cancel))
            return Error(ErrorCode::cancelled, "cancelled during proxy CONNECT");
        if (w != IoStatus::ok)
            return Error(deadlines.connect_timeout_code(), "timed out waiting for the proxy");
        // Peek, then consume exactly the head: bytes after it belong to the tunnel.
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
        if (n <= 0)
            return Error(ErrorCode::connect_failed, "proxy closed the connection during CONNECT");
        std::size_t used = 0;
        auto status = parser.feed(std::string_view(buf, static_cast<std::size_t>(n)), used);
        ::recv(fd, buf, used, 0);
        if (status == HeadParser::Status::error)
            return Error(ErrorCode::protocol, "proxy CONNECT response: " + parser.error());
        if (status == HeadParser::Status::done) {
            int code = parser.head().status;
            if (code / 100 == 2) return std::nullopt;
            Error e(ErrorCode::connect_failed,
                    "proxy refused CONNECT with status " + std::to_string(code));
            e.status = code;
            return e;
        }
    }
}

}  // namespace nous::http::detail
