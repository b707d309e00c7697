#pragma once
// One HTTP/1.1 connection: a POCO session owning a connected (TLS) socket,
// with our own deadline-aware I/O primitives on top.

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/Session.h>
#include <Poco/Net/StreamSocket.h>

#include <memory>
#include <string>
#include <string_view>

#include "internal.hpp"
#include "nous/http/client.hpp"
#include "url.hpp"

namespace nous::http::detail {

/// POCO's session with its hidden reconnect disabled: HTTPClientSession::write()
/// silently closes, reconnects and rewrites when the first write on a kept-alive
/// session fails (poco-1.11.md, "More traps"), bypassing our resend rule, pool
/// counters, connect deadline and host check. We call HTTPSession::write directly.
class PocoSession : public Poco::Net::HTTPClientSession {
public:
    explicit PocoSession(const Poco::Net::StreamSocket& socket) : HTTPClientSession(socket) {}
    int write(const char* buffer, std::streamsize length) override {
        return HTTPSession::write(buffer, length);
    }
    int receive_some(char* buffer, int length) { return HTTPSession::receive(buffer, length); }
};

enum class IoStatus {
    ok,
    eof,            ///< orderly close (or close_notify on TLS)
    reset,          ///< ECONNRESET / EPIPE
    tls_eof,        ///< TLS peer closed without close_notify
    timeout_read,
    timeout_total,
    cancelled,
    failed,         ///< any other socket or TLS error
};

struct IoResult {
    IoStatus status = IoStatus::ok;
    std::size_t bytes = 0;
    std::string detail;
};

/// Everything that selects a connection: pooled connections serve only calls
/// with the same key (a session opened with `insecure` never serves a verifying call).
struct ConnectionKey {
    Url origin;
    std::string proxy;  ///< proxy URL or empty
    std::string ca_file;
    bool insecure = false;
    int receive_buffer_bytes = 0;
    bool tcp_nodelay = true;

    std::string to_string() const;
};

struct ConnectTimings {
    std::chrono::microseconds resolve{0}, connect{0}, tls{0};
};

class Connection {
public:
    Connection(Poco::Net::StreamSocket socket, bool tls, bool via_proxy);
    ~Connection();

    int fd() const noexcept { return fd_; }
    bool tls() const noexcept { return tls_; }
    /// True for plain http through a proxy: the request line carries the absolute URL.
    bool absolute_form() const noexcept { return via_proxy_ && !tls_; }

    /// Writes every part, in as few send() calls as the kernel allows.
    IoResult write_all(std::string_view head, std::string_view body, const Deadlines& deadlines,
                       const CancelToken* cancel);
    /// Reads up to `n` bytes once, waiting at most min(idle, total) for the first.
    IoResult read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                       const CancelToken* cancel);
    /// A pooled connection is reusable only if nothing is readable on it:
    /// readable on an idle keep-alive socket means the peer closed or sent junk.
    bool probe_alive();

    /// TLS session to resume on the next connection to this origin.
    Poco::Net::Session::Ptr tls_session();
    bool tls_session_reused();

    Clock::time_point idle_since{};
    std::uint64_t requests_served = 0;

private:
    void set_send_timeout(const Deadlines& deadlines);
    void set_receive_timeout(int ms);
    IoResult read_plain(char* buffer, std::size_t n, const Deadlines& deadlines, const CancelToken* cancel);

    std::unique_ptr<PocoSession> session_;
    int send_timeout_ms_ = -1;
    int receive_timeout_ms_ = -1;
    int fd_ = -1;
    bool tls_ = false;
    bool via_proxy_ = false;
};

/// TLS settings of one origin: verification against the system store plus
/// `ca_file`, host name checked by OpenSSL inside the handshake.
Poco::Net::Context::Ptr make_tls_context(const ConnectionKey& key);

/// Resolve, connect to every address in turn, tunnel through the proxy if
/// any, and complete the TLS handshake, all under the connect deadline.
Result<std::unique_ptr<Connection>> open_connection(const ConnectionKey& key,
                                                    Poco::Net::Context::Ptr tls_context,
                                                    Poco::Net::Session::Ptr tls_session,
                                                    const Deadlines& deadlines,
                                                    const CancelToken* cancel,
                                                    ConnectTimings& timings);

}  // namespace nous::http::detail
