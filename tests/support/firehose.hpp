#pragma once
// A loopback SSE firehose for backpressure tests.

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

#include "fault_server.hpp"

namespace nous::test {

constexpr int kServerSendBuffer = 64 * 1024;

/// Streams `total` bytes of SSE (events of about 16 KiB, chunked) as fast as
/// the socket takes them, counting what the kernel accepted and noting when a
/// send would block (the TCP backpressure reached the server).
struct Firehose {
    std::atomic<std::uint64_t> written{0};
    std::atomic<bool> blocked{false};
    std::atomic<bool> peer_gone{false};
    std::atomic<int> events{0};
    FaultServer server;

    explicit Firehose(std::uint64_t total)
        : server([this, total](Peer& peer, std::uint64_t) { run(peer, total); }) {}

    void run(Peer& peer, std::uint64_t total) {
        if (!peer.read_request()) return;
        int fd = peer.fd();
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kServerSendBuffer, sizeof kServerSendBuffer);
        std::string out =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
            "chunked\r\n\r\n";
        std::string event = "data: " + std::string(16 * 1024 - 8, 'f') + "\n\n";
        char size[16];
        std::snprintf(size, sizeof size, "%zx\r\n", event.size());
        std::string framed = std::string(size) + event + "\r\n";
        std::uint64_t queued = 0;
        int count = 0;
        std::size_t offset = 0;
        for (;;) {
            if (offset == out.size()) {
                out.clear();
                offset = 0;
                if (queued >= total) {
                    if (count == -1) return;
                    out = "0\r\n\r\n";
                    count = -1;
                } else {
                    out = framed;
                    queued += framed.size();
                    ++count;
                    events = count;
                }
            }
            ssize_t n =
                ::send(fd, out.data() + offset, out.size() - offset, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                offset += static_cast<std::size_t>(n);
                written += static_cast<std::uint64_t>(n);
                blocked = false;
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                blocked = true;
                pollfd p{fd, POLLOUT, 0};
                ::poll(&p, 1, 100);
                if (p.revents & (POLLERR | POLLHUP)) break;
                continue;
            }
            break;
        }
        peer_gone = true;
    }
};

}  // namespace nous::test
