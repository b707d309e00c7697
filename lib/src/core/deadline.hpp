#pragma once
// The clock and the deadlines of one call.

#include <chrono>

#include "nous/http/error.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

using Clock = std::chrono::steady_clock;

/// The connect deadline and the optional total deadline of one attempt, and
/// the idle gap allowed between two received bytes.
struct Deadlines {
    Clock::time_point connect_by = Clock::time_point::max();
    Clock::time_point total_by = Clock::time_point::max();
    Milliseconds idle{defaults::read_timeout};

    /// Earliest of connect deadline and total deadline.
    Clock::time_point connect_limit() const noexcept {
        return connect_by < total_by ? connect_by : total_by;
    }
    /// Error code for a connect-phase timeout.
    ErrorCode connect_timeout_code() const noexcept {
        return total_by <= connect_by ? ErrorCode::timeout_total : ErrorCode::timeout_connect;
    }
};

/// Milliseconds left until `t` (0 when past), clamped to int for poll().
int millis_until(Clock::time_point t) noexcept;

}  // namespace nous::http::detail
