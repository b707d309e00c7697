#pragma once
// Waiting on a socket under the deadlines of a call, and naming the
// deadline that ran out.

#include "core/deadline.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

/// timeout_total or timeout_read for a wait that ran out (Deadlines::expired).
inline IoStatus timeout_status(Expiry expiry) noexcept {
    return expiry == Expiry::total ? IoStatus::timeout_total : IoStatus::timeout_read;
}

/// Waits for `events` on fd until min(`idle_limit`, total deadline).
/// Returns ok, timeout_read, timeout_total or failed.
IoStatus wait_fd(int fd, short events, const Deadlines& deadlines, Clock::time_point idle_limit);

}  // namespace nous::http::detail
