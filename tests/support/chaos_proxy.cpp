#include "chaos_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace nous::test {

namespace {

int listen_loopback(std::uint16_t& port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0)
        throw std::runtime_error("chaos proxy: cannot listen");
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    return fd;
}

int connect_loopback(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

void reset(int fd) {
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

}  // namespace

ChaosProxy::ChaosProxy(std::uint16_t target_port, ChaosSettings settings)
    : target_port_(target_port), settings_(settings) {
    listen_fd_ = listen_loopback(port_);
    acceptor_ = std::thread([this] {
        for (;;) {
            int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (stopping_) {
                if (client >= 0) ::close(client);
                return;
            }
            if (client < 0) continue;
            int one = 1;
            ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            accepted_.fetch_add(1);
            std::lock_guard lock(mutex_);
            relays_.emplace_back([this, client, s = settings_] { relay(client, s); });
        }
    });
}

ChaosProxy::~ChaosProxy() {
    stopping_ = true;
    int wake = connect_loopback(port_);
    if (wake >= 0) ::close(wake);
    acceptor_.join();
    ::close(listen_fd_);
    {
        std::lock_guard lock(mutex_);
        for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : relays_) t.join();
}

void ChaosProxy::set(ChaosSettings settings) {
    std::lock_guard lock(mutex_);
    settings_ = settings;
}

void ChaosProxy::relay(int client, ChaosSettings s) {
    int server = connect_loopback(target_port_);
    if (server < 0) {
        reset(client);
        ::close(client);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        open_fds_.push_back(client);
        open_fds_.push_back(server);
    }
    std::uint64_t total = 0;
    bool stalled = false;
    char buffer[16384];
    bool open[2] = {true, true};  // client->server, server->client
    const int from[2] = {client, server}, to[2] = {server, client};
    while ((open[0] || open[1]) && !stopping_) {
        pollfd p[2] = {{client, static_cast<short>(open[0] && !stalled ? POLLIN : 0), 0},
                       {server, static_cast<short>(open[1] && !stalled ? POLLIN : 0), 0}};
        if (::poll(p, 2, 50) < 0 && errno != EINTR) break;
        if (stalled) {
            // Hold everything; end when either side goes away.
            char probe;
            if (::recv(client, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0 || stopping_) break;
            continue;
        }
        bool failed = false;
        for (int d = 0; d < 2 && !failed; ++d) {
            if (!(p[d].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            std::size_t want = sizeof buffer;
            if (s.reset_at) want = std::min<std::uint64_t>(want, s.reset_at - total);
            if (s.stall_at) want = std::min<std::uint64_t>(want, s.stall_at - total);
            ssize_t n = ::recv(from[d], buffer, want, 0);
            if (n <= 0) {
                // Pass the orderly close on, one direction at a time.
                ::shutdown(to[d], SHUT_WR);
                open[d] = false;
                if (n < 0) failed = true;
                continue;
            }
            std::size_t sent = 0;
            while (sent < static_cast<std::size_t>(n)) {
                if (s.delay.count() > 0) std::this_thread::sleep_for(s.delay);
                std::size_t piece = static_cast<std::size_t>(n) - sent;
                if (s.split) piece = std::min(piece, s.split);
                ssize_t w = ::send(to[d], buffer + sent, piece, MSG_NOSIGNAL);
                if (w <= 0) {
                    failed = true;
                    break;
                }
                sent += static_cast<std::size_t>(w);
            }
            total += sent;
            forwarded_.fetch_add(sent);
            if (s.reset_at && total >= s.reset_at) {
                reset(client);
                reset(server);
                failed = true;
            }
            if (s.stall_at && total >= s.stall_at) stalled = true;
        }
        if (failed) break;
    }
    {
        std::lock_guard lock(mutex_);
        open_fds_.remove(client);
        open_fds_.remove(server);
    }
    ::close(client);
    ::close(server);
}

}  // namespace nous::test
