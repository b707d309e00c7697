#pragma once
// A scripted raw-socket loopback server for fault tests: each accepted
// connection runs a script that can read requests, write any bytes, stall,
// close, or reset. POCO's server cannot cut a chunk in half or send a reset
// (docs/design/poco-traps.md#loopback-tricks).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace nous::test {

/// One accepted connection as a script sees it.
struct PeerSocket {
    std::mutex mutex;
    int fd = -1;
    std::thread thread;
};

class Peer {
  public:
    Peer(PeerSocket& socket, std::atomic<bool>& stopping)
        : socket_(socket), fd_(socket.fd), stopping_(stopping) {}
    int fd() const { return fd_; }
    /// Reads one request (head + Content-Length body). False on EOF/stop.
    bool read_request(std::string* head_out = nullptr, std::string* body_out = nullptr);
    /// Writes bytes; false if the peer is gone.
    bool send(std::string_view bytes);
    /// Orderly close of our side (FIN).
    void close_write();
    /// RST instead of FIN (SO_LINGER 0).
    void reset();
    /// Blocks until the client closes or the server stops (a stall).
    void stall();
    std::uint64_t requests_read() const { return requests_; }

  private:
    PeerSocket& socket_;
    int fd_;
    std::atomic<bool>& stopping_;
    std::string buffer_;
    std::uint64_t requests_ = 0;
};

class FaultServer {
  public:
    using Script = std::function<void(Peer&, std::uint64_t connection_index)>;
    explicit FaultServer(Script script, int backlog = 64);
    ~FaultServer();
    std::uint16_t port() const { return port_; }
    std::string url(const std::string& path = "/") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    std::uint64_t connections() const { return accepted_.load(); }
    void stop();

  private:
    Script script_;
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> accepted_{0};
    std::thread acceptor_;
    std::mutex mutex_;
    std::list<PeerSocket> connections_;
};

/// "HTTP/1.1 200 OK" response with Content-Length.
std::string ok_response(std::string_view body, std::string_view extra_headers = "");

/// One chunk of a chunked body: size line, data, CRLF.
std::string chunk(std::string_view data);

/// The head of a chunked text/event-stream response.
inline const std::string kSseHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

/// A listening socket with backlog 0 whose queue is filled, so that further
/// connects time out (docs/design/poco-traps.md#loopback-tricks).
class BlackholeListener {
  public:
    BlackholeListener();
    ~BlackholeListener();
    std::uint16_t port() const { return port_; }

  private:
    int listen_fd_ = -1;
    std::list<int> fillers_;
    std::uint16_t port_ = 0;
};

/// Runs `fn` on another thread after `server_saw` becomes true (no sleeps).
template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace nous::test
