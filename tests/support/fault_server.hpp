#pragma once
// A scripted raw-socket loopback server for fault tests: each accepted
// connection runs a script that can read requests, write any bytes, stall,
// close, or reset, over plain TCP or TLS alike: one Script either way.
// POCO's server cannot cut a chunk in half or send a reset
// (docs/design/poco-traps.md#loopback-tricks).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace nous::test {

/// One accepted connection as a script sees it.
struct PeerSocket {
    std::mutex mutex;
    int fd = -1;
    std::thread thread;
};

class Peer {
  public:
    Peer(PeerSocket& socket, std::atomic<bool>& stopping, SSL* ssl = nullptr)
        : socket_(socket), fd_(socket.fd), stopping_(stopping), ssl_(ssl) {}
    /// The TCP socket (raw bytes under TLS, socket options).
    int fd() const { return fd_; }
    /// The connection's TLS state, or null over plain TCP.
    SSL* ssl() const { return ssl_; }
    /// Reads one request (head + Content-Length body). False on EOF/stop.
    bool read_request(std::string* head_out = nullptr, std::string* body_out = nullptr);
    /// Writes bytes (through TLS when there is TLS); false if the peer is gone.
    bool send(std::string_view bytes);
    /// Orderly close of our side (close_notify over TLS, then FIN).
    void close_write();
    /// RST instead of FIN (SO_LINGER 0).
    void reset();
    /// Blocks until the client closes or the server stops (a stall).
    void stall();
    bool stopping() const { return stopping_.load(); }
    std::uint64_t requests_read() const { return requests_; }

  private:
    /// Reads some bytes (through TLS when there is TLS); <= 0 at EOF or error.
    long receive(char* buffer, std::size_t size);

    PeerSocket& socket_;
    int fd_;
    std::atomic<bool>& stopping_;
    SSL* ssl_ = nullptr;
    std::string buffer_;
    std::uint64_t requests_ = 0;
};

/// TLS for a FaultServer: the server's certificate and key, and what each
/// handshake tells the test (SNI, resumption).
struct ServerTls {
    std::string cert_file, key_file;
    bool tls12_only = false;  ///< at most TLS 1.2 (resumption by session id / ticket, not PSK)
    /// After each handshake that completed, on the connection's thread.
    std::function<void(SSL*)> on_handshake;
};

class FaultServer {
  public:
    using Script = std::function<void(Peer&, std::uint64_t connection_index)>;
    explicit FaultServer(Script script, int backlog = 64);
    /// The same script behind a TLS handshake; a connection whose handshake
    /// fails (a client that rejects the certificate) never reaches it.
    FaultServer(Script script, ServerTls tls, int backlog = 64);
    ~FaultServer();
    std::uint16_t port() const { return port_; }
    std::string url(const std::string& path = "/") const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
               path;
    }
    /// TCP connections accepted (a failed handshake included).
    std::uint64_t connections() const { return accepted_.load(); }
    void stop();

  private:
    void start(int backlog);
    void serve(PeerSocket& socket, std::uint64_t index);

    Script script_;
    std::optional<ServerTls> tls_;
    SSL_CTX* ssl_ctx_ = nullptr;
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

/// A loopback port nothing listens on (bound, then closed): a connect to it
/// is refused, and a server started next may take it.
std::uint16_t unused_loopback_port();

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
