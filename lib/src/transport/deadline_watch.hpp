#pragma once
// A total deadline that no read can outlive. POCO's TLS read re-polls with
// its own receive timeout after every partial record
// (docs/design/poco-traps.md#no-total-deadline), so a server dripping one
// record a byte at a time is never cut by per-read timeouts alone. While a
// read runs under a total deadline, a watch interrupts its transport (a
// shutdown) when the deadline passes; the reader then reports timeout_total.

#include "core/deadline.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

class DeadlineWatch {
public:
    /// Watches `target` until destroyed; at `when` it is interrupted. A
    /// time_point::max() watches nothing (no thread, no lock).
    DeadlineWatch(CancelTarget* target, Clock::time_point when);
    ~DeadlineWatch();
    DeadlineWatch(const DeadlineWatch&) = delete;
    DeadlineWatch& operator=(const DeadlineWatch&) = delete;

    /// Whether the deadline fired while watched.
    bool fired() const noexcept;

private:
    CancelTarget* target_;
    Clock::time_point when_;
    std::uint64_t id_ = 0;
};

}  // namespace nous::http::detail
