#pragma once
// The transport seam: what the exchange and stream code need of a
// connection. The POCO connection implements it; tests implement it in
// memory to fragment, stall and fail on call N.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/cancel.hpp"
#include "core/deadline.hpp"
#include "nous/http/result.hpp"

namespace nous::http::detail {

enum class IoStatus {
    ok,
    eof,      ///< orderly close (or close_notify on TLS)
    reset,    ///< ECONNRESET / EPIPE
    tls_eof,  ///< TLS peer closed without close_notify
    timeout_read,
    timeout_total,
    cancelled,
    failed,  ///< any other socket or TLS error
};

struct IoResult {
    IoStatus status = IoStatus::ok;
    std::size_t bytes = 0;  ///< read: bytes received; write: bytes that left before a failure
    std::string detail;
};

struct ConnectTimings {
    std::chrono::microseconds resolve{0}, connect{0}, tls{0};
};

/// One connected byte stream to an origin (TCP, TLS, or a test's memory).
/// Owned and driven by one thread at a time; interrupt() is the only call
/// another thread may make.
class Transport : public CancelTarget {
  public:
    virtual ~Transport() = default;

    /// Writes every byte of `head` then `body`, in as few sends as the kernel
    /// allows, bounded by the deadlines. On failure `bytes` says how much left.
    virtual IoResult write_all(std::string_view head, std::string_view body,
                               const Deadlines& deadlines, const CancelToken* cancel) = 0;
    /// Reads up to `n` bytes once, waiting at most min(idle, total deadline) for the first.
    virtual IoResult read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                               const CancelToken* cancel) = 0;
    /// A pooled transport may serve another request only if nothing is
    /// readable on it: readable while idle means the peer closed or sent junk.
    virtual bool probe_alive() = 0;
    /// Thread-safe: wakes a blocked read, write or connect (a shutdown; the
    /// owner still closes). docs/design/poco-traps.md#cross-thread-cancel
    void interrupt() noexcept override = 0;

    /// Plain http through a proxy: the request line carries the absolute URL.
    virtual bool absolute_form() const noexcept { return false; }
    virtual bool tls() const noexcept { return false; }
    /// The TLS handshake resumed an earlier session.
    virtual bool resumed_tls_session() const noexcept { return false; }

    /// The descriptor a thread can wait on for the next bytes, or -1 (a
    /// test's memory transport): a stream's read relay needs one.
    virtual int wait_fd() const noexcept { return -1; }
    /// Bytes may be readable without waiting on wait_fd(): TLS holds
    /// decrypted or read-ahead bytes, or the last socket read filled its
    /// buffer, so the socket may hold more than that read took.
    virtual bool input_pending() const noexcept { return false; }
    /// Bytes are readable now: input_pending(), or the socket holds some (or
    /// an end or error a read would report). One non-blocking peek.
    virtual bool readable_now() noexcept { return true; }

    /// Set by the pool: when the transport last finished a response.
    Clock::time_point idle_since{};
    std::uint64_t requests_served = 0;
};

/// Opens transports to one origin (one pool key).
class Connector {
  public:
    virtual ~Connector() = default;
    /// Resolve, connect, tunnel, handshake: all under the connect deadline.
    virtual Result<std::unique_ptr<Transport>> connect(const Deadlines& deadlines,
                                                       const CancelToken* cancel,
                                                       ConnectTimings& timings) = 0;
    /// A transport that completed a response goes back to the pool: keep what
    /// the next connection can reuse (the TLS session).
    virtual void on_reusable(Transport&) {}
    /// Drops the TLS session kept for resumption: the next connection makes a
    /// full handshake.
    virtual void forget_tls_session() {}
};

}  // namespace nous::http::detail
