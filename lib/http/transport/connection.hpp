#pragma once
// One HTTP/1.1 connection over POCO: a session owning a connected (TLS)
// socket, with our own deadline-aware I/O on top. Opening one:
// transport/connector.hpp.

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/Session.h>
#include <Poco/Net/StreamSocket.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "transport/tls_bio.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

/// POCO's session with its hidden reconnect disabled: HTTPClientSession::write()
/// silently closes, reconnects and rewrites when the first write on a kept-alive
/// session fails (docs/design/poco-traps.md#hidden-reconnect), bypassing our
/// resend rule, pool counters, connect deadline and host check.
class PocoSession : public Poco::Net::HTTPClientSession {
  public:
    explicit PocoSession(const Poco::Net::StreamSocket& socket) : HTTPClientSession(socket) {}
    int write(const char* buffer, std::streamsize length) override {
        return HTTPSession::write(buffer, length);
    }
    int receive_some(char* buffer, int length) { return HTTPSession::receive(buffer, length); }
};

/// POCO owns the socket and, over TLS, the SSL object it handshook; reads and
/// writes are ours: plain ones are syscalls on the descriptor, TLS ones
/// SSL_read / SSL_write through our BIO (transport/tls_bio.hpp).
class Connection final : public Transport, private SocketIo {
  public:
    /// `ssl`: the handshaken SSL object of a TLS socket (null for plain).
    Connection(Poco::Net::StreamSocket socket, SSL* ssl, bool via_proxy);
    ~Connection() override;
    /// Puts our BIO under the SSL object; false if OpenSSL cannot allocate it.
    bool take_over_tls();

    IoResult write_all(std::string_view head, std::string_view body, const Deadlines& deadlines,
                       const CancelToken* cancel) override;
    IoResult read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                       const CancelToken* cancel) override;
    bool probe_alive() override;
    void interrupt() noexcept override;
    bool absolute_form() const noexcept override { return via_proxy_ && !tls_; }
    bool tls() const noexcept override { return tls_; }
    bool resumed_tls_session() const noexcept override { return resumed_; }
    int wait_fd() const noexcept override { return fd_; }
    bool input_pending() const noexcept override;
    bool readable_now() noexcept override;

    int fd() const noexcept { return fd_; }
    /// TLS: the key-exchange group of the handshake (an OpenSSL NID; 0 for plain).
    int negotiated_group() const noexcept;
    /// The TLS session to resume on the next connection to this origin, or
    /// null when it is the one this method returned last time (a kept-alive
    /// connection checks in after every response).
    Poco::Net::Session::Ptr tls_session_if_new();

  private:
    // SocketIo: the BIO's syscalls.
    long socket_recv(char* buffer, std::size_t n) override;
    long socket_send(const char* data, std::size_t n) override;
    int socket_fd() const noexcept override { return fd_; }

    void set_send_timeout(const Deadlines& deadlines);
    void set_receive_timeout(int ms);
    /// Before each blocking recv: the receive timeout for this wait (the
    /// clock read once by the caller), and TCP_QUICKACK on the second read
    /// after a write.
    void prepare_recv(Clock::time_point limit, Clock::time_point now);
    IoResult write_tls(std::string_view head, std::string_view body, const Deadlines& deadlines,
                       const CancelToken* cancel);
    // Inlined into read_some(), as ResponseReader::refill() is into its callers.
    [[gnu::always_inline]] IoResult read_plain(char* buffer, std::size_t n,
                                               const Deadlines& deadlines,
                                               const CancelToken* cancel);
    IoResult read_tls(char* buffer, std::size_t n, const Deadlines& deadlines,
                      const CancelToken* cancel);

    std::unique_ptr<PocoSession> session_;
    SSL* ssl_ = nullptr;                             ///< owned by POCO's socket inside session_
    const SSL_SESSION* reported_session_ = nullptr;  ///< by tls_session_if_new
    std::string tls_write_buffer_;  ///< head and body joined into one record; kept between requests
    // The deadlines of the TLS operation in progress, read by socket_recv.
    Clock::time_point op_total_by_ = Clock::time_point::max();
    std::chrono::milliseconds op_idle_{0};
    Clock::time_point op_recv_limit_{};  ///< what the last blocking recv waited until
    bool op_past_total_ = false;         ///< socket_recv refused to wait past the total deadline
    bool io_nonblocking_ = false;        ///< the liveness probe and the close: never wait
    int reads_since_write_ = 0;
    bool last_recv_filled_ = false;  ///< the last socket read took all it asked for
    int send_timeout_ms_ = -1;
    int receive_timeout_ms_ = -1;
    int fd_ = -1;
    bool tls_ = false;
    bool via_proxy_ = false;
    bool resumed_ = false;
};

}  // namespace nous::http::detail
