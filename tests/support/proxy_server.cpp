#include "proxy_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>

namespace nous::test {

namespace {

int connect_to(const std::string& host, std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    std::string h = host == "localhost" ? "127.0.0.1" : host;
    if (::inet_pton(AF_INET, h.c_str(), &addr.sin_addr) != 1 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// Copies bytes both ways until either side closes.
void pump(int a, int b) {
    char buf[65536];
    for (;;) {
        pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        if (::poll(p, 2, 10000) <= 0) return;
        for (int i = 0; i < 2; ++i) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = ::recv(p[i].fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            if (!send_all(i == 0 ? b : a, std::string_view(buf, static_cast<std::size_t>(n))))
                return;
        }
    }
}

bool split_authority(const std::string& authority, std::string& host, std::uint16_t& port) {
    auto colon = authority.rfind(':');
    if (colon == std::string::npos) return false;
    host = authority.substr(0, colon);
    unsigned p = 0;
    std::from_chars(authority.data() + colon + 1, authority.data() + authority.size(), p);
    port = static_cast<std::uint16_t>(p);
    return p != 0;
}

}  // namespace

ProxyServer::ProxyServer(std::string require_auth)
    : require_auth_(std::move(require_auth)),
      server_([this](Peer& peer, std::uint64_t) { handle(peer); }) {}

std::string ProxyServer::last_request_line() const {
    std::lock_guard lock(mutex_);
    return last_line_;
}

void ProxyServer::handle(Peer& peer) {
    std::string head, body;
    if (!peer.read_request(&head, &body)) return;
    std::string line = head.substr(0, head.find("\r\n"));
    {
        std::lock_guard lock(mutex_);
        last_line_ = line;
    }
    if (!require_auth_.empty() &&
        head.find("Proxy-Authorization: " + require_auth_ + "\r\n") == std::string::npos) {
        peer.send("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
        return;
    }
    auto sp1 = line.find(' ');
    auto sp2 = line.rfind(' ');
    std::string method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    if (method == "CONNECT") {
        std::string host;
        std::uint16_t port = 0;
        int upstream = split_authority(target, host, port) ? connect_to(host, port) : -1;
        if (upstream < 0) {
            peer.send("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
            return;
        }
        connects_.fetch_add(1);
        peer.send("HTTP/1.1 200 Connection Established\r\n\r\n");
        pump(peer.fd(), upstream);
        ::close(upstream);
        return;
    }
    // Absolute form: http://host:port/path -> forward in origin form, once.
    const std::string scheme = "http://";
    if (target.compare(0, scheme.size(), scheme) != 0) {
        peer.send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        return;
    }
    auto path_at = target.find('/', scheme.size());
    std::string authority = target.substr(scheme.size(), path_at - scheme.size());
    std::string path = path_at == std::string::npos ? "/" : target.substr(path_at);
    std::string host;
    std::uint16_t port = 0;
    int upstream = split_authority(authority, host, port) ? connect_to(host, port) : -1;
    if (upstream < 0) {
        peer.send("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    }
    forwarded_.fetch_add(1);
    std::string rest = head.substr(head.find("\r\n"));
    send_all(upstream, method + " " + path + " HTTP/1.1" + rest + body);
    // Relay the answer until the origin or the client closes.
    pump(peer.fd(), upstream);
    ::close(upstream);
}

}  // namespace nous::test
