// A connection's I/O: plain and TLS reads and writes with our deadlines,
// the liveness probe, and the TLS session to resume.

#include "transport/connection.hpp"

#include <Poco/Net/SecureStreamSocket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/limits.hpp"
#include "transport/io_counters.hpp"
#include "transport/io_wait.hpp"
#include "transport/plain_syscalls.hpp"

namespace nous::http::detail {

using Poco::Net::SecureStreamSocket;
using Poco::Net::StreamSocket;

namespace {

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

}  // namespace

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
    int ms = std::max(1, millis_until(deadlines.read_limit(Clock::now())));
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

void Connection::prepare_recv(Clock::time_point limit, Clock::time_point now) {
    set_receive_timeout(std::max(1, millis_until(limit, now)));
    // The kernel re-enters delayed-ACK mode when we send, so the first read
    // of a response may hold its ACK; the second read only happens when that
    // first segment did not hold the whole response, which is when a Nagle
    // server waits for our ACK before it sends the rest. Arming here ACKs at
    // once, and leaves the mode off for every later read until we send again
    // (docs/design/poco-traps.md#nagle). A response that arrives in one
    // segment costs no setsockopt at all.
    if (++reads_since_write_ == 2) arm_quickack(fd_);
}

IoResult Connection::write_all(std::string_view head, std::string_view body,
                               const Deadlines& deadlines, const CancelToken* cancel) {
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
                return {timeout_status(deadlines.expired_now()), 0, "write timed out"};
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

long Connection::socket_send(const char* data, std::size_t n) {
    // MSG_NOSIGNAL: a peer that closed gets EPIPE, never SIGPIPE.
    count_send();
    return ::send(fd_, data, n, MSG_NOSIGNAL | (io_nonblocking_ ? MSG_DONTWAIT : 0));
}

long Connection::socket_recv(char* buffer, std::size_t n) {
    if (io_nonblocking_) return socket_recv_call(fd_, buffer, n, MSG_DONTWAIT);
    // OpenSSL calls this as often as it needs to complete a record: checking
    // the total deadline before each wait is what bounds a record that drips
    // in a byte at a time (docs/design/poco-traps.md#no-total-deadline).
    const auto now = Clock::now();
    if (now >= op_total_by_) {
        op_past_total_ = true;
        errno = EAGAIN;
        return -1;
    }
    op_recv_limit_ = std::min(op_total_by_, saturating_add(now, op_idle_));
    prepare_recv(op_recv_limit_, now);
    count_recv();
    const ssize_t got = socket_recv_call(fd_, buffer, n, 0);
    last_recv_filled_ = got > 0 && static_cast<std::size_t>(got) == n;
    return got;
}

IoResult Connection::write_tls(std::string_view head, std::string_view body,
                               const Deadlines& deadlines, const CancelToken* cancel) {
    // Head and the first 256 KiB of body in one SSL_write: for a request of
    // up to 16 KiB that is one record and one send. The buffer is kept, so
    // this costs a copy, not an allocation.
    constexpr std::size_t piece = limits::io_piece_bytes;
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
                return {timeout_status(deadlines.expired_now()), sent, "write timed out"};
            std::string detail =
                error == SSL_ERROR_SYSCALL && sys != 0 ? std::strerror(sys) : openssl_error_text();
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

IoResult Connection::read_tls(char* buffer, std::size_t n, const Deadlines& deadlines,
                              const CancelToken* cancel) {
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
                if (deadlines.expired(op_recv_limit_) == Expiry::not_yet) continue;
                return {IoStatus::timeout_read, 0, "timed out"};
            case SSL_ERROR_SYSCALL:
                if (sys == ECONNRESET || sys == EPIPE)
                    return failure(IoStatus::reset, std::strerror(sys));
                if (sys == 0)
                    return failure(IoStatus::tls_eof, "connection closed without close_notify");
                return failure(IoStatus::failed, std::strerror(sys));
            case SSL_ERROR_SSL:
                // OpenSSL 3 reports a close without close_notify as this error:
                // a truncation, not a TLS failure (docs/design/poco-traps.md#tls-eof).
                if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
                    return failure(IoStatus::tls_eof, "connection closed without close_notify");
                return failure(IoStatus::failed, "TLS read failed: " + openssl_error_text());
            default:
                return failure(IoStatus::failed,
                               "TLS read failed: SSL error " + std::to_string(error));
        }
    }
}

inline IoResult Connection::read_plain(char* buffer, std::size_t n, const Deadlines& deadlines,
                                       const CancelToken* cancel) {
    // One blocking recv() bounded by SO_RCVTIMEO (set only when it changes)
    // instead of poll() + recv(): one syscall per read on the hot path. A
    // cancel's shutdown() wakes it like it wakes poll().
    for (;;) {
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        const auto now = Clock::now();
        if (now >= deadlines.total_by) return {IoStatus::timeout_total, 0, "total deadline passed"};
        const auto limit = deadlines.read_limit(now);
        prepare_recv(limit, now);
        count_recv();
        ssize_t got = socket_recv_call(fd_, buffer, n, 0);
        last_recv_filled_ = got > 0 && static_cast<std::size_t>(got) == n;
        if (got > 0) return {IoStatus::ok, static_cast<std::size_t>(got), {}};
        if (is_cancelled(cancel)) return {IoStatus::cancelled, 0, "cancelled"};
        if (got == 0) return {IoStatus::eof, 0, "connection closed by peer"};
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) {
            const Expiry expiry = deadlines.expired(limit);
            if (expiry == Expiry::not_yet) continue;  // SO_RCVTIMEO rounds: wait the rest
            return {timeout_status(expiry), 0, "timed out"};
        }
        if (err == ECONNRESET || err == EPIPE) return {IoStatus::reset, 0, std::strerror(err)};
        return {IoStatus::failed, 0, std::strerror(err)};
    }
}

bool Connection::input_pending() const noexcept {
    return last_recv_filled_ || (tls_ && SSL_has_pending(ssl_) == 1);
}

bool Connection::readable_now() noexcept {
    if (input_pending()) return true;
    char byte;
    const ssize_t got = socket_recv_call(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    // Data, an end, or an error other than "nothing yet": a read reports it at once.
    return got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
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

}  // namespace nous::http::detail
