#include "transport/connection.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "codec/http1_parser.hpp"
#include "core/cancel.hpp"
#include "core/log.hpp"
#include "core/proxy.hpp"
#include "transport/dialer.hpp"
#include "transport/io_counters.hpp"
#include "transport/resolver.hpp"
#include "transport/sigpipe.hpp"
#include "transport/socket_interrupt.hpp"
#include "transport/trust_store.hpp"

namespace nous::http::detail {

using Poco::Net::Context;
using Poco::Net::SecureStreamSocket;
using Poco::Net::StreamSocket;

std::string ConnectionKey::to_string() const {
    std::string k = origin.origin();
    k += "|proxy=" + proxy;
    k += "|ca=" + ca_file;
    k += insecure ? "|insecure" : "|verify";
    k += "|rcvbuf=" + std::to_string(receive_buffer_bytes);
    k += tcp_nodelay ? "|nodelay" : "|nagle";
    return k;
}

namespace {

std::chrono::microseconds since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
}

/// Waits for `events` on fd until min(now + idle, total deadline).
/// Returns ok, timeout_read, timeout_total or failed.
IoStatus wait_fd(int fd, short events, const Deadlines& deadlines, Clock::time_point idle_limit) {
    Clock::time_point limit = std::min(idle_limit, deadlines.total_by);
    for (;;) {
        pollfd p{fd, events, 0};
        int rc = ::poll(&p, 1, millis_until(limit));
        if (rc > 0) return IoStatus::ok;
        if (rc == 0) {
            if (Clock::now() < limit) continue;  // poll rounds; re-check against the clock
            return deadlines.total_by <= idle_limit ? IoStatus::timeout_total : IoStatus::timeout_read;
        }
        if (errno != EINTR) return IoStatus::failed;
    }
}

/// Leaves delayed-ACK ("pingpong") mode: without it a server that writes
/// headers and body separately with Nagle on costs ~40 ms per request
/// (docs/design/poco-traps.md#nagle).
void arm_quickack(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

/// SSL_get_error needs an empty error queue before each SSL call. Peeking
/// first: clearing walks the whole queue, and it is empty on the hot path.
void clear_openssl_errors() {
    if (ERR_peek_error() != 0) ERR_clear_error();
}

/// The newest OpenSSL error of this thread, as text.
std::string openssl_error_text() {
    unsigned long code = ERR_peek_last_error();
    if (code == 0) return "no OpenSSL error recorded";
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    return text;
}

/// CONNECT host:port through an HTTP proxy; the socket then carries the tunnel.
std::optional<Error> tunnel(StreamSocket& socket, const ConnectionKey& key, const Url& proxy,
                            const Deadlines& deadlines, const CancelToken* cancel) {
    int fd = socket.impl()->sockfd();
    std::string authority = (key.origin.host_is_ipv6 ? "[" + key.origin.host + "]" : key.origin.host) +
                            ":" + std::to_string(key.origin.port);
    std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!proxy.userinfo.empty())
        request += "Proxy-Authorization: " + basic_auth(proxy.userinfo) + "\r\n";
    request += "\r\n";
    Deadlines connect_phase = deadlines;
    connect_phase.total_by = deadlines.connect_limit();
    std::size_t sent = 0;
    while (sent < request.size()) {
        if (wait_fd(fd, POLLOUT, connect_phase, Clock::time_point::max()) != IoStatus::ok)
            return Error(deadlines.connect_timeout_code(), "timed out writing CONNECT to the proxy");
        ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return Error(ErrorCode::connect_failed, std::string("proxy CONNECT: ") + std::strerror(errno));
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    HeadParser parser;
    char buf[4096];
    for (;;) {
        IoStatus w = wait_fd(fd, POLLIN, connect_phase, Clock::time_point::max());
        if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled during proxy CONNECT");
        if (w != IoStatus::ok)
            return Error(deadlines.connect_timeout_code(), "timed out waiting for the proxy");
        // Peek, then consume exactly the head: bytes after it belong to the tunnel.
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
        if (n <= 0) return Error(ErrorCode::connect_failed, "proxy closed the connection during CONNECT");
        std::size_t used = 0;
        auto status = parser.feed(std::string_view(buf, static_cast<std::size_t>(n)), used);
        ::recv(fd, buf, used, 0);
        if (status == HeadParser::Status::error)
            return Error(ErrorCode::protocol, "proxy CONNECT response: " + parser.error());
        if (status == HeadParser::Status::done) {
            int code = parser.head().status;
            if (code / 100 == 2) return std::nullopt;
            Error e(ErrorCode::connect_failed, "proxy refused CONNECT with status " + std::to_string(code));
            e.status = code;
            return e;
        }
    }
}

}  // namespace

Context::Ptr make_tls_context(const ConnectionKey& key) {
    Context::Params params;
    params.caLocation = key.ca_file;
    // Relaxed + SSL_VERIFY_PEER: the chain is verified in the handshake.
    params.verificationMode = key.insecure ? Context::VERIFY_NONE : Context::VERIFY_RELAXED;
    params.verificationDepth = 9;
    // POCO's default loadDefaultCAs=false means no trust anchors at all
    // (docs/design/poco-traps.md#tls-context); its true parses the whole
    // system bundle into every context. add_system_trust below does it lazily.
    params.loadDefaultCAs = false;
    params.cipherList = "HIGH:!aNULL:!eNULL:!MD5:!RC4";
    Context::Ptr context = new Context(Context::TLS_CLIENT_USE, params);
    context->requireMinimumProtocol(Context::PROTO_TLSV1_2);
    // POCO's Context sets the key-exchange groups to its ecdhCurve parameter,
    // X448 first by default, so the client's one key share is X448: offer
    // X25519 first, as OpenSSL itself does, the group servers prefer
    // (docs/design/poco-traps.md#tls-groups).
    SSL_CTX_set1_groups_list(context->sslContext(), "X25519:P-256:X448:P-384:P-521");
    // TLS sessions are resumed per origin: POCO turns the client cache off by
    // default (docs/design/poco-traps.md#tls-session-cache).
    context->enableSessionCache(true);
    // POCO's own host check runs after connect, skips loopback hosts unless
    // VERIFY_STRICT, and passes vacuously after a timed-out handshake
    // (docs/design/poco-traps.md#tls-handshake-timeout). OpenSSL checks the
    // host inside the handshake instead.
    context->enableExtendedCertificateVerification(false);
    SSL_CTX* raw = context->sslContext();
    add_system_trust(raw);
    // Reads and writes after the handshake are ours, on POCO's SSL object
    // (transport/tls_bio.hpp): let the connection find it.
    enable_ssl_capture(raw);
    // One recv takes a whole record and whatever follows it, instead of a
    // 5-byte record header and then its body: half the reads.
    SSL_CTX_set_read_ahead(raw, 1);
    if (!key.insecure) {
        // Replace POCO's verify callback (routed through SSLManager events) with
        // OpenSSL's own decision.
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
        X509_VERIFY_PARAM* param = SSL_CTX_get0_param(raw);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = is_ip_literal(key.origin.host)
                     ? X509_VERIFY_PARAM_set1_ip_asc(param, key.origin.host.c_str())
                     : X509_VERIFY_PARAM_set1_host(param, key.origin.host.c_str(), 0);
        if (ok != 1) throw Poco::Net::SSLException("cannot set the expected host name");
    }
    return context;
}

Result<std::unique_ptr<Connection>> open_connection(const ConnectionKey& key, Context::Ptr tls_context,
                                                    Poco::Net::Session::Ptr tls_session,
                                                    const Deadlines& deadlines,
                                                    const CancelToken* cancel, ConnectTimings& timings) {
    std::optional<Url> proxy;
    if (!key.proxy.empty()) {
        auto parsed = parse_url(key.proxy);
        if (!parsed) return parsed.error();
        proxy = std::move(parsed.value());
    }
    const Url& peer = proxy ? *proxy : key.origin;
    auto t0 = Clock::now();
    auto addresses = resolve(peer.host, peer.port, deadlines, cancel);
    timings.resolve = since(t0);
    if (!addresses) return addresses.error();

    auto t1 = Clock::now();
    auto connected = dial(addresses.value(), SocketSetup{key.receive_buffer_bytes, key.tcp_nodelay},
                          peer.host + ":" + std::to_string(peer.port), deadlines, cancel);
    if (!connected) {
        // Every cached address failed: the next attempt resolves the name
        // afresh instead of trying the same dead addresses for the cache's TTL.
        if (connected.error().code != ErrorCode::cancelled) forget_resolution(peer.host, peer.port);
        return connected.error();
    }
    timings.connect = since(t1);
    StreamSocket socket = connected.value();
    int fd = socket.impl()->sockfd();
    SocketRegistration registration(cancel, fd);

    if (proxy && key.origin.https) {
        if (auto e = tunnel(socket, key, *proxy, deadlines, cancel)) return *e;
    }
    if (!key.origin.https) return std::make_unique<Connection>(socket, nullptr, proxy.has_value());

    // POCO's handshake writes through OpenSSL's socket BIO, without
    // MSG_NOSIGNAL; so does the close of a socket whose handshake failed
    // (docs/design/poco-traps.md#sigpipe).
    SigpipeGuard guard;
    SslCapture capture(fd);
    auto t2 = Clock::now();
    auto handshake_budget = [&] {
        int ms = millis_until(deadlines.connect_limit());
        return Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(std::max(ms, 1)) * 1000);
    };
    try {
        socket.setReceiveTimeout(handshake_budget());
        socket.setSendTimeout(handshake_budget());
        // A host name makes POCO send it as SNI (docs/design/poco-traps.md#sni);
        // an IP literal is never sent (RFC 6066 section 3 forbids it). The host
        // check is the context's either way (X509_check_host / X509_check_ip).
        SecureStreamSocket secure = is_ip_literal(key.origin.host)
                                        ? SecureStreamSocket::attach(socket, tls_context, tls_session)
                                        : SecureStreamSocket::attach(socket, key.origin.host, tls_context, tls_session);
        // A handshake that times out inside attach is reported as success
        // (docs/design/poco-traps.md#tls-handshake-timeout): finish it explicitly and check.
        secure.setReceiveTimeout(handshake_budget());
        int rc = secure.completeHandshake();
        if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled during the TLS handshake");
        if (rc != 1)
            return Error(Clock::now() >= deadlines.connect_limit() ? deadlines.connect_timeout_code()
                                                                   : ErrorCode::tls_failed,
                         "TLS handshake with " + key.origin.host + " did not complete");
        timings.tls = since(t2);
        if (capture.ssl() == nullptr)
            return Error(ErrorCode::tls_failed, "TLS with " + key.origin.host +
                                                    ": the handshake's SSL object was not seen (context without capture)");
        auto connection = std::make_unique<Connection>(secure, capture.ssl(), proxy.has_value());
        if (!connection->take_over_tls())
            return Error(ErrorCode::tls_failed, "TLS with " + key.origin.host + ": cannot allocate an OpenSSL BIO");
        if (key.insecure)
            warn_once("insecure:" + key.origin.origin(),
                      "TLS certificate verification is OFF for " + key.origin.origin() + " (insecure)");
        return connection;
    } catch (const Poco::TimeoutException&) {
        return Error(deadlines.connect_timeout_code(), "timed out in the TLS handshake with " + key.origin.host);
    } catch (const Poco::Exception& e) {
        if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled during the TLS handshake");
        if (Clock::now() >= deadlines.connect_limit())
            return Error(deadlines.connect_timeout_code(), "timed out in the TLS handshake with " + key.origin.host);
        // what() is only the class name in POCO: use displayText().
        return Error(ErrorCode::tls_failed, "TLS handshake with " + key.origin.host + " failed: " + e.displayText());
    }
}

Connection::Connection(StreamSocket socket, SSL* ssl, bool via_proxy)
    : session_(std::make_unique<PocoSession>(socket)),
      ssl_(ssl),
      fd_(socket.impl()->sockfd()),
      tls_(ssl != nullptr),
      via_proxy_(via_proxy) {
    session_->setKeepAlive(true);
    if (ssl_ != nullptr) resumed_ = SSL_session_reused(ssl_) == 1;
}

int Connection::negotiated_group() const noexcept {
    return ssl_ != nullptr ? SSL_get_negotiated_group(ssl_) : 0;
}

bool Connection::take_over_tls() { return ssl_ != nullptr && attach_socket_bio(ssl_, this); }

Connection::~Connection() {
    // POCO's close writes close_notify through our BIO (MSG_NOSIGNAL), and
    // must not wait for a peer that stopped reading.
    io_nonblocking_ = true;
    try {
        session_->abort();
    } catch (...) {
    }
    // The SSL object (and our BIO, which points here) goes with the session:
    // before the members it reads.
    session_.reset();
}

void Connection::interrupt() noexcept { ::shutdown(fd_, SHUT_RDWR); }

void Connection::set_send_timeout(const Deadlines& deadlines) {
    // Blocking writes are bounded by SO_SNDTIMEO: the idle timeout, or what is
    // left of the total deadline. Set only when it changes (one syscall saved per request).
    int ms = std::max(1, millis_until(std::min(deadlines.total_by, Clock::now() + deadlines.idle)));
    if (deadlines.total_by == Clock::time_point::max() && ms == send_timeout_ms_) return;
    send_timeout_ms_ = ms;
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void Connection::set_receive_timeout(int ms) {
    // The idle timeout is the same read after read: one setsockopt per
    // connection, unless a total deadline shrinks it.
    if (ms == receive_timeout_ms_) return;
    receive_timeout_ms_ = ms;
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void Connection::prepare_recv(Clock::time_point limit) {
    set_receive_timeout(std::max(1, millis_until(limit)));
    // The kernel re-enters delayed-ACK mode when we send, so the first read
    // of a response may hold its ACK; the second read only happens when that
    // first segment did not hold the whole response, which is when a Nagle
    // server waits for our ACK before it sends the rest. Arming here ACKs at
    // once, and leaves the mode off for every later read until we send again
    // (docs/design/poco-traps.md#nagle). A response that arrives in one
    // segment costs no setsockopt at all.
    if (++reads_since_write_ == 2) arm_quickack(fd_);
}

IoResult Connection::write_all(std::string_view head, std::string_view body, const Deadlines& deadlines,
                               const CancelToken* cancel) {
    reads_since_write_ = 0;
    if (tls_) return write_tls(head, body, deadlines, cancel);
    // Headers and body leave in one blocking sendmsg() however large the
    // body: the kernel queues it all in one call unless the send timeout
    // fires (we loop on a short count all the same). MSG_NOSIGNAL: POCO
    // sends without it (docs/design/poco-traps.md#sigpipe).
    iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                      {const_cast<char*>(body.data()), body.size()}};
    int count = body.empty() ? 1 : 2;
    iovec* iov = parts;
    set_send_timeout(deadlines);
    while (count > 0) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = static_cast<std::size_t>(count);
        count_send();
        ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK)
                return {Clock::now() >= deadlines.total_by ? IoStatus::timeout_total : IoStatus::timeout_read, 0,
                        "write timed out"};
            return {err == EPIPE || err == ECONNRESET ? IoStatus::reset : IoStatus::failed, 0, std::strerror(err)};
        }
        auto left = static_cast<std::size_t>(n);
        while (count > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            ++iov;
            --count;
        }
        if (count > 0) {
            iov->iov_base = static_cast<char*>(iov->iov_base) + left;
            iov->iov_len -= left;
        }
    }
    return {};
}

long Connection::socket_send(const char* data, std::size_t n) {
    // MSG_NOSIGNAL: a peer that closed gets EPIPE, never SIGPIPE.
    count_send();
    return ::send(fd_, data, n, MSG_NOSIGNAL | (io_nonblocking_ ? MSG_DONTWAIT : 0));
}

long Connection::socket_recv(char* buffer, std::size_t n) {
    if (io_nonblocking_) return ::recv(fd_, buffer, n, MSG_DONTWAIT);
    // OpenSSL calls this as often as it needs to complete a record: checking
    // the total deadline before each wait is what bounds a record that drips
    // in a byte at a time (docs/design/poco-traps.md#no-total-deadline).
    const auto now = Clock::now();
    if (now >= op_total_by_) {
        op_past_total_ = true;
        errno = EAGAIN;
        return -1;
    }
    op_recv_limit_ = std::min(op_total_by_, now + op_idle_);
    prepare_recv(op_recv_limit_);
    count_recv();
    return ::recv(fd_, buffer, n, 0);
}

IoResult Connection::write_tls(std::string_view head, std::string_view body, const Deadlines& deadlines,
                               const CancelToken* cancel) {
    // Head and the first 256 KiB of body in one SSL_write: for a request of
    // up to 16 KiB that is one record and one send. The buffer is kept, so
    // this costs a copy, not an allocation.
    constexpr std::size_t piece = 256 * 1024;
    tls_write_buffer_.assign(head);
    tls_write_buffer_.append(body.substr(0, std::min(body.size(), piece)));
    std::string_view rest = body.size() > piece ? body.substr(piece) : std::string_view{};
    std::string_view data = tls_write_buffer_;
    set_send_timeout(deadlines);
    op_total_by_ = deadlines.total_by;
    std::size_t sent = 0;
    for (;;) {
        while (!data.empty()) {
            if (is_cancelled(cancel)) return {IoStatus::cancelled, sent, "cancelled"};
            clear_openssl_errors();
            std::size_t written = 0;
            int rc = SSL_write_ex(ssl_, data.data(), data.size(), &written);
            if (rc == 1) {
                data.remove_prefix(written);
                sent += written;
                continue;
            }
            const int error = SSL_get_error(ssl_, rc);
            const int sys = errno;
            if (is_cancelled(cancel)) return {IoStatus::cancelled, sent, "cancelled"};
            if (error == SSL_ERROR_WANT_WRITE)  // SO_SNDTIMEO fired
                return {Clock::now() >= deadlines.total_by ? IoStatus::timeout_total : IoStatus::timeout_read, sent,
                        "write timed out"};
            std::string detail = error == SSL_ERROR_SYSCALL && sys != 0 ? std::strerror(sys) : openssl_error_text();
            return {IoStatus::reset, sent, "TLS write failed: " + detail};
        }
        if (rest.empty()) break;
        data = rest.substr(0, std::min(rest.size(), piece));
        rest.remove_prefix(data.size());
    }
    return {};
}

IoResult Connection::read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                               const CancelToken* cancel) {
    return tls_ ? read_tls(buffer, n, deadlines, cancel) : read_plain(buffer, n, deadlines, cancel);
}

IoResult Connection::read_tls(char* buffer, std::size_t n, const Deadlines& deadlines, const CancelToken* cancel) {
    op_total_by_ = deadlines.total_by;
    op_idle_ = deadlines.idle;
    op_past_total_ = false;
    auto past_total = [&] { return op_past_total_ || Clock::now() >= deadlines.total_by; };
    auto failure = [&](IoStatus status, std::string detail) -> IoResult {
        // After shutdown() from a canceller the socket looks closed: check first
        // (docs/design/poco-traps.md#clean-eof-after-shutdown).
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (past_total()) return {IoStatus::timeout_total, 0, "total deadline passed"};
        return {status, 0, std::move(detail)};
    };
    for (;;) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        clear_openssl_errors();
        std::size_t got = 0;
        int rc = SSL_read_ex(ssl_, buffer, n, &got);
        if (rc == 1) return {IoStatus::ok, got, {}};
        const int error = SSL_get_error(ssl_, rc);
        const int sys = errno;
        switch (error) {
            case SSL_ERROR_ZERO_RETURN:
                return failure(IoStatus::eof, "connection closed by peer (close_notify)");
            case SSL_ERROR_WANT_READ:
                // Our BIO's recv timed out (or refused to wait past the total deadline).
                if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
                if (past_total()) return {IoStatus::timeout_total, 0, "total deadline passed"};
                if (Clock::now() < op_recv_limit_) continue;  // woke early (timer rounding)
                return {IoStatus::timeout_read, 0, "timed out"};
            case SSL_ERROR_SYSCALL:
                if (sys == ECONNRESET || sys == EPIPE) return failure(IoStatus::reset, std::strerror(sys));
                if (sys == 0) return failure(IoStatus::tls_eof, "connection closed without close_notify");
                return failure(IoStatus::failed, std::strerror(sys));
            case SSL_ERROR_SSL:
                // OpenSSL 3 reports a close without close_notify as this error:
                // a truncation, not a TLS failure (docs/design/poco-traps.md#tls-eof).
                if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
                    return failure(IoStatus::tls_eof, "connection closed without close_notify");
                return failure(IoStatus::failed, "TLS read failed: " + openssl_error_text());
            default:
                return failure(IoStatus::failed, "TLS read failed: SSL error " + std::to_string(error));
        }
    }
}

IoResult Connection::read_plain(char* buffer, std::size_t n, const Deadlines& deadlines, const CancelToken* cancel) {
    // One blocking recv() bounded by SO_RCVTIMEO (set only when it changes)
    // instead of poll() + recv(): one syscall per read on the hot path. A
    // cancel's shutdown() wakes it like it wakes poll().
    for (;;) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        const auto now = Clock::now();
        if (now >= deadlines.total_by) return {IoStatus::timeout_total, 0, "total deadline passed"};
        const auto limit = std::min(deadlines.total_by, now + deadlines.idle);
        prepare_recv(limit);
        count_recv();
        ssize_t got = ::recv(fd_, buffer, n, 0);
        if (got > 0) return {IoStatus::ok, static_cast<std::size_t>(got), {}};
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (got == 0) return {IoStatus::eof, 0, "connection closed by peer"};
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) {
            if (Clock::now() < limit) continue;  // woke early (timer rounding): wait out the rest
            return {deadlines.total_by <= limit ? IoStatus::timeout_total : IoStatus::timeout_read, 0, "timed out"};
        }
        if (err == ECONNRESET || err == EPIPE) return {IoStatus::reset, 0, std::strerror(err)};
        return {IoStatus::failed, 0, std::strerror(err)};
    }
}

bool Connection::probe_alive() {
    // TLS: bytes OpenSSL already holds (read ahead) are invisible to poll.
    if (!tls_ || SSL_has_pending(ssl_) == 0) {
        pollfd p{fd_, POLLIN, 0};
        int rc = ::poll(&p, 1, 0);
        if (rc == 0) return true;
        if (rc < 0 || !tls_ || (p.revents & (POLLHUP | POLLERR))) return false;
    }
    // TLS and readable: a late session ticket is alive; data, close_notify or
    // a close is not. Read without waiting to tell them apart.
    io_nonblocking_ = true;
    clear_openssl_errors();
    char byte;
    std::size_t got = 0;
    int rc = SSL_read_ex(ssl_, &byte, 1, &got);
    const bool alive = rc != 1 && SSL_get_error(ssl_, rc) == SSL_ERROR_WANT_READ;
    io_nonblocking_ = false;
    return alive;
}

Poco::Net::Session::Ptr Connection::tls_session_if_new() {
    if (!tls_) return nullptr;
    // TLS 1.3 tickets arrive after the handshake, each one a new session
    // object: compare pointers, and build POCO's wrapper only for a new one.
    const SSL_SESSION* current = SSL_get0_session(ssl_);
    if (current == nullptr || current == reported_session_) return nullptr;
    reported_session_ = current;
    try {
        // POCO's Session constructor is not public: its socket makes the wrapper.
        return SecureStreamSocket(session_->socket()).currentSession();
    } catch (...) {
        return nullptr;
    }
}

Result<std::unique_ptr<Transport>> PocoConnector::connect(const Deadlines& deadlines, const CancelToken* cancel,
                                                         ConnectTimings& timings) {
    Context::Ptr context;
    Poco::Net::Session::Ptr session;
    if (key_.origin.https) {
        std::lock_guard lock(mutex_);
        if (!tls_context_) {
            try {
                tls_context_ = make_tls_context(key_);
            } catch (const Poco::Exception& e) {
                return Error(ErrorCode::tls_failed, "TLS setup failed: " + e.displayText());
            }
        }
        context = tls_context_;
        session = tls_session_;
    }
    auto opened = open_connection(key_, context, session, deadlines, cancel, timings);
    if (!opened) return opened.error();
    return std::unique_ptr<Transport>(std::move(opened.value()));
}

void PocoConnector::forget_tls_session() {
    std::lock_guard lock(mutex_);
    tls_session_ = nullptr;
}

void PocoConnector::on_reusable(Transport& transport) {
    if (!transport.tls()) return;
    // Only this connector makes the transports of its pool.
    Poco::Net::Session::Ptr session = static_cast<Connection&>(transport).tls_session_if_new();
    if (!session) return;
    std::lock_guard lock(mutex_);
    tls_session_ = session;
}

}  // namespace nous::http::detail
