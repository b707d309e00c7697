// open_connection: socket options set before the SYN, deadlines, cancellation.

#include <netinet/tcp.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "fault_server.hpp"
#include "nous/mock/mock_server.hpp"
#include "transport/connector.hpp"
#include "transport/tls_context.hpp"

using namespace nous::http;
using namespace nous::http::detail;

namespace {
ConnectionKey key_for(std::uint16_t port, int rcvbuf, bool nodelay) {
    ConnectionKey key;
    key.origin = parse_url("http://127.0.0.1:" + std::to_string(port) + "/").value();
    key.receive_buffer_bytes = rcvbuf;
    key.tcp_nodelay = nodelay;
    return key;
}
Deadlines soon() {
    Deadlines d;
    d.connect_by = Clock::now() + std::chrono::seconds(20);
    return d;
}
int sockopt(int fd, int level, int name) {
    int value = 0;
    socklen_t len = sizeof value;
    ::getsockopt(fd, level, name, &value, &len);
    return value;
}
}  // namespace

TEST_CASE("the receive buffer is capped before connect, and TCP_NODELAY follows the option") {
    MockServer server;
    server.start();
    ConnectTimings timings;
    auto small = open_connection(key_for(server.port(), 8192, true), nullptr, nullptr, soon(),
                                 nullptr, timings);
    REQUIRE(small.ok());
    // Linux doubles the value asked for to account for its bookkeeping.
    CHECK(sockopt(small.value()->fd(), SOL_SOCKET, SO_RCVBUF) <= 2 * 8192);
    CHECK(sockopt(small.value()->fd(), IPPROTO_TCP, TCP_NODELAY) == 1);
    auto plain = open_connection(key_for(server.port(), 0, false), nullptr, nullptr, soon(),
                                 nullptr, timings);
    REQUIRE(plain.ok());
    CHECK(sockopt(plain.value()->fd(), SOL_SOCKET, SO_RCVBUF) > 2 * 8192);
    CHECK(sockopt(plain.value()->fd(), IPPROTO_TCP, TCP_NODELAY) == 0);
}

TEST_CASE(
    "a connect past its deadline is timeout_connect, past the total deadline, timeout_total") {
    nous::test::BlackholeListener blackhole;
    ConnectTimings timings;
    Deadlines d;
    d.connect_by = Clock::now() + std::chrono::milliseconds(100);
    auto r =
        open_connection(key_for(blackhole.port(), 0, true), nullptr, nullptr, d, nullptr, timings);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::timeout_connect);
    Deadlines t;
    t.connect_by = Clock::now() + std::chrono::seconds(30);
    t.total_by = Clock::now() + std::chrono::milliseconds(100);
    auto s =
        open_connection(key_for(blackhole.port(), 0, true), nullptr, nullptr, t, nullptr, timings);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::timeout_total);
}

TEST_CASE("a pooled idle connection is probed: alive while quiet, dead once the peer closed") {
    std::atomic<bool> close_now{false};
    nous::test::FaultServer server([&](nous::test::Peer& peer, std::uint64_t) {
        nous::test::wait_until([&] { return close_now.load(); });
        peer.close_write();
    });
    ConnectTimings timings;
    auto c = open_connection(key_for(server.port(), 0, true), nullptr, nullptr, soon(), nullptr,
                             timings);
    REQUIRE(c.ok());
    CHECK(c.value()->probe_alive());
    close_now = true;
    // Wait for the FIN to arrive (the probe result itself is what changes).
    CHECK(nous::test::wait_until([&] { return !c.value()->probe_alive(); }));
}
