#include "transport/connection.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "codec/http1_parser.hpp"
#include "core/cancel.hpp"
#include "core/log.hpp"
#include "core/proxy.hpp"
#include "transport/deadline_watch.hpp"
#include "transport/io_counters.hpp"
#include "transport/resolver.hpp"
#include "transport/sigpipe.hpp"
#include "transport/socket_interrupt.hpp"

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

/// Re-arms TCP_QUICKACK: the kernel clears it, and without it a server that
/// writes headers and body separately with Nagle on costs ~40 ms per request
/// (docs/design/poco-traps.md#nagle).
void arm_quickack(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
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

/// Non-blocking connect of one address under the deadline. The fd is published
/// to the cancel token first, so cancel() can shut it down mid-connect.
IoResult connect_one(StreamSocket& socket, const ResolvedAddress& address, const Deadlines& deadlines,
                     const CancelToken* cancel) {
    int fd = socket.impl()->sockfd();
    socket.setBlocking(false);
    int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length);
    if (rc != 0 && errno != EINPROGRESS) return {IoStatus::failed, 0, std::strerror(errno)};
    if (rc != 0) {
        Deadlines connect_phase = deadlines;
        connect_phase.total_by = deadlines.connect_limit();
        IoStatus w = wait_fd(fd, POLLOUT, connect_phase, Clock::time_point::max());
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (w != IoStatus::ok) return {IoStatus::timeout_total, 0, "connect timed out"};
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) return {IoStatus::failed, 0, std::strerror(err)};
    }
    if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
    socket.setBlocking(true);
    return {};
}

}  // namespace

Context::Ptr make_tls_context(const ConnectionKey& key) {
    Context::Params params;
    params.caLocation = key.ca_file;
    // Relaxed + SSL_VERIFY_PEER: the chain is verified in the handshake.
    params.verificationMode = key.insecure ? Context::VERIFY_NONE : Context::VERIFY_RELAXED;
    params.verificationDepth = 9;
    // POCO's default loadDefaultCAs=false means no trust anchors at all
    // (docs/design/poco-traps.md#tls-context).
    params.loadDefaultCAs = true;
    params.cipherList = "HIGH:!aNULL:!eNULL:!MD5:!RC4";
    Context::Ptr context = new Context(Context::TLS_CLIENT_USE, params);
    context->requireMinimumProtocol(Context::PROTO_TLSV1_2);
    // POCO's Context restricts the key-exchange groups to its ecdhCurve
    // parameter (prime256v1 by default): offer X25519 first, as OpenSSL
    // itself does, so that the first key share is the one servers prefer
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
    std::optional<StreamSocket> connected;
    std::string failures;
    for (const auto& address : addresses.value()) {
        // socket() fails under EMFILE/ENFILE (and POCO throws): a typed
        // error, never an exception out of post() or a leaked pool slot.
        std::optional<StreamSocket> created;
        try {
            created.emplace(address.family() == AF_INET6 ? Poco::Net::SocketAddress::IPv6
                                                         : Poco::Net::SocketAddress::IPv4);
        } catch (const Poco::Exception& e) {
            return Error(ErrorCode::connect_failed, "cannot create a socket: " + e.displayText());
        }
        StreamSocket& socket = *created;
        int fd = socket.impl()->sockfd();
        // Before the SYN: the window scale is fixed at handshake time.
        if (key.receive_buffer_bytes > 0)
            ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &key.receive_buffer_bytes, sizeof(int));
        int nodelay = key.tcp_nodelay ? 1 : 0;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
        SocketRegistration registration(cancel, fd);
        IoResult r = connect_one(socket, address, deadlines, cancel);
        if (r.status == IoStatus::ok) {
            connected = socket;
            break;
        }
        if (r.status == IoStatus::cancelled) return Error(ErrorCode::cancelled, "cancelled while connecting");
        if (r.status == IoStatus::timeout_total)
            return Error(deadlines.connect_timeout_code(),
                         "timed out connecting to " + peer.host + " (" + address.to_string() + ")");
        failures += (failures.empty() ? "" : "; ") + address.to_string() + ": " + r.detail;
    }
    if (!connected)
        return Error(ErrorCode::connect_failed,
                     "cannot connect to " + peer.host + ":" + std::to_string(peer.port) + " (" + failures + ")");
    timings.connect = since(t1);
    StreamSocket socket = *connected;
    int fd = socket.impl()->sockfd();
    SocketRegistration registration(cancel, fd);

    if (proxy && key.origin.https) {
        if (auto e = tunnel(socket, key, *proxy, deadlines, cancel)) return *e;
    }
    if (!key.origin.https) return std::make_unique<Connection>(socket, false, proxy.has_value());

    auto t2 = Clock::now();
    auto handshake_budget = [&] {
        int ms = millis_until(deadlines.connect_limit());
        return Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(std::max(ms, 1)) * 1000);
    };
    try {
        socket.setReceiveTimeout(handshake_budget());
        socket.setSendTimeout(handshake_budget());
        // Host name (not an IP) so that SNI is sent (docs/design/poco-traps.md#sni).
        SecureStreamSocket secure = SecureStreamSocket::attach(socket, key.origin.host, tls_context, tls_session);
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
        // Reads set their own timeout (read_tls: half the idle gap, since POCO
        // waits in recv and again in poll); this covers anything POCO reads first.
        secure.setReceiveTimeout(Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(deadlines.idle.count()) * 1000));
        if (key.insecure)
            warn_once("insecure:" + key.origin.origin(),
                      "TLS certificate verification is OFF for " + key.origin.origin() + " (insecure)");
        return std::make_unique<Connection>(secure, true, proxy.has_value());
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

Connection::Connection(StreamSocket socket, bool tls, bool via_proxy)
    : session_(std::make_unique<PocoSession>(socket)),
      fd_(socket.impl()->sockfd()),
      tls_(tls),
      via_proxy_(via_proxy) {
    session_->setKeepAlive(true);
    if (tls_) {
        try {
            resumed_ = SecureStreamSocket(session_->socket()).sessionWasReused();
        } catch (...) {
        }
    }
}

Connection::~Connection() {
    // Closing a TLS socket writes close_notify: guard SIGPIPE on this thread
    // (docs/design/poco-traps.md#sigpipe).
    SigpipeGuard guard;
    try {
        session_->abort();
    } catch (...) {
    }
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

IoResult Connection::write_all(std::string_view head, std::string_view body, const Deadlines& deadlines,
                               const CancelToken* cancel) {
    if (!tls_) {
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
                return {err == EPIPE || err == ECONNRESET ? IoStatus::reset : IoStatus::failed, 0,
                        std::strerror(err)};
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
    // TLS: one SSL_write for head and the first 256 KiB of body, then large pieces.
    constexpr std::size_t piece = 256 * 1024;
    std::string first;
    first.reserve(head.size() + std::min(body.size(), piece));
    first.append(head);
    first.append(body.substr(0, piece));
    std::string_view rest = body.size() > piece ? body.substr(piece) : std::string_view{};
    try {
        set_send_timeout(deadlines);
        auto send_piece = [&](std::string_view data) {
            while (!data.empty()) {
                count_send();
                int n = session_->write(data.data(), static_cast<std::streamsize>(data.size()));
                if (n <= 0) throw Poco::Net::NetException("TLS write returned " + std::to_string(n));
                data.remove_prefix(static_cast<std::size_t>(n));
            }
        };
        send_piece(first);
        while (!rest.empty()) {
            send_piece(rest.substr(0, piece));
            rest.remove_prefix(std::min(piece, rest.size()));
        }
    } catch (const Poco::TimeoutException&) {
        return {Clock::now() >= deadlines.total_by ? IoStatus::timeout_total : IoStatus::timeout_read, 0, "write timed out"};
    } catch (const Poco::Exception& e) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        return {IoStatus::reset, 0, e.displayText()};
    }
    return {};
}

IoResult Connection::read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                               const CancelToken* cancel) {
    return tls_ ? read_tls(buffer, n, deadlines, cancel) : read_plain(buffer, n, deadlines, cancel);
}

void Connection::set_tls_receive_timeout(const Deadlines& deadlines, Clock::time_point limit) {
    // POCO re-polls with its own receive timeout after every partial TLS
    // record (docs/design/poco-traps.md#no-total-deadline): keep that timeout
    // no longer than what is left of min(idle, total deadline).
    // Half the gap: POCO waits once in recv (SO_RCVTIMEO) and once more in poll.
    long long us = std::max<long long>(
        1000, std::chrono::duration_cast<std::chrono::microseconds>(limit - Clock::now()).count() / 2);
    if (deadlines.total_by == Clock::time_point::max() && us / 1000 == tls_receive_timeout_us_ / 1000) return;
    tls_receive_timeout_us_ = us;
    session_->socket().setReceiveTimeout(Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(us)));
}

IoResult Connection::read_tls(char* buffer, std::size_t n, const Deadlines& deadlines, const CancelToken* cancel) {
    // POCO re-polls inside one SSL_read for as long as a record keeps dripping
    // in: the watch shuts the socket down when the total deadline passes
    // (docs/design/poco-traps.md#no-total-deadline).
    DeadlineWatch watch(this, deadlines.total_by);
    auto past_total = [&] { return Clock::now() >= deadlines.total_by; };
    auto failure = [&](IoStatus status, std::string detail) -> IoResult {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (past_total()) return {IoStatus::timeout_total, 0, "total deadline passed"};
        return {status, 0, std::move(detail)};
    };
    for (;;) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        bool pending = false;
        try {
            pending = session_->socket().available() > 0;  // SSL_pending: poll cannot see it
        } catch (...) {
        }
        // No poll of ours before the read: SSL_read blocks in recv bounded by
        // SO_RCVTIMEO, and POCO then polls once more with the same timeout
        // (docs/design/poco-traps.md#no-total-deadline), so each half gets
        // half of the gap allowed. One syscall per read saved.
        if (!pending) arm_quickack(fd_);
        int got = 0;
        try {
            const auto now = Clock::now();
            if (now >= deadlines.total_by) return {IoStatus::timeout_total, 0, "total deadline passed"};
            set_tls_receive_timeout(deadlines, std::min(deadlines.total_by, now + deadlines.idle));
            count_recv();
            got = session_->receive_some(buffer, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
        } catch (const Poco::TimeoutException&) {
            return {past_total() ? IoStatus::timeout_total : IoStatus::timeout_read, 0, "timed out"};
        } catch (const Poco::Net::ConnectionResetException& e) {
            return failure(IoStatus::reset, e.displayText());
        } catch (const Poco::Net::SSLException& e) {
            // OpenSSL 3 reports a close without close_notify as this SSLException:
            // a truncation, not a TLS failure (docs/design/poco-traps.md#tls-eof).
            std::string text = e.displayText();
            return failure(text.find("unexpected eof") != std::string::npos ? IoStatus::tls_eof : IoStatus::failed,
                           text);
        } catch (const Poco::Exception& e) {
            return failure(IoStatus::failed, e.displayText());
        }
        if (got > 0) return {IoStatus::ok, static_cast<std::size_t>(got), {}};
        // After shutdown() from a canceller (or the deadline watch), the socket
        // looks like a clean EOF: check first
        // (docs/design/poco-traps.md#clean-eof-after-shutdown).
        if (got == 0) return failure(IoStatus::eof, "connection closed by peer");
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (past_total()) return {IoStatus::timeout_total, 0, "total deadline passed"};
        // Negative on TLS: a record without application data (e.g. a session
        // ticket); wait for more.
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
        set_receive_timeout(std::max(1, millis_until(limit)));
        arm_quickack(fd_);
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

void Connection::set_receive_timeout(int ms) {
    // The idle timeout is the same read after read: one setsockopt per
    // connection, unless a total deadline shrinks it.
    if (ms == receive_timeout_ms_) return;
    receive_timeout_ms_ = ms;
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool Connection::probe_alive() {
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, 0);
    if (rc == 0) return true;
    if (rc < 0 || !tls_ || (p.revents & (POLLHUP | POLLERR))) return false;
    // TLS: a late session ticket makes the socket readable without data.
    try {
        if (session_->socket().available() > 0) return false;
        session_->socket().setBlocking(false);
        char byte;
        int got = session_->receive_some(&byte, 1);
        session_->socket().setBlocking(true);
        return got < 0;
    } catch (...) {
        return false;
    }
}

Poco::Net::Session::Ptr Connection::tls_session() {
    if (!tls_) return nullptr;
    try {
        SecureStreamSocket secure(session_->socket());
        return secure.currentSession();
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

void PocoConnector::on_reusable(Transport& transport) {
    if (!transport.tls()) return;
    // Only this connector makes the transports of its pool.
    Poco::Net::Session::Ptr session = static_cast<Connection&>(transport).tls_session();
    if (!session) return;
    std::lock_guard lock(mutex_);
    tls_session_ = session;
}

}  // namespace nous::http::detail
