#pragma once
// The clock and the deadlines of one call.

#include <chrono>

#include "nous/http/error.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

using Clock = std::chrono::steady_clock;

/// `t + d`, saturated at Clock::time_point::max(): a huge timeout
/// (milliseconds::max() included) means "no timeout", never an overflow that
/// fires at once. The comparison is in `d`'s own unit, so that converting a
/// huge `d` to the clock's nanoseconds never overflows either.
template <typename Rep, typename Period>
constexpr Clock::time_point saturating_add(Clock::time_point t,
                                           std::chrono::duration<Rep, Period> d) noexcept {
    using D = std::chrono::duration<Rep, Period>;
    if (d <= D::zero()) return t + std::chrono::duration_cast<Clock::duration>(d);
    if (d >= std::chrono::duration_cast<D>(Clock::time_point::max() - t))
        return Clock::time_point::max();
    return t + std::chrono::duration_cast<Clock::duration>(d);
}

/// What ran out when a bounded wait for bytes came back empty.
enum class Expiry {
    not_yet,  ///< it woke before its limit (timers round): wait the rest
    idle,     ///< the idle gap allowed between two received bytes
    total,    ///< the call's total deadline
};

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
    /// The limit of one wait for bytes that starts at `now`: min(now + idle, total deadline).
    Clock::time_point read_limit(Clock::time_point now) const noexcept {
        const Clock::time_point by_idle = saturating_add(now, idle);
        return by_idle < total_by ? by_idle : total_by;
    }
    /// A wait bounded by `limit` (read_limit) came back without bytes: was
    /// it early, or which deadline ran out? The one place that decides
    /// between timeout_read and timeout_total.
    Expiry expired(Clock::time_point limit) const noexcept { return expired(limit, Clock::now()); }
    /// The same, with the clock already read.
    Expiry expired(Clock::time_point limit, Clock::time_point now) const noexcept {
        if (now < limit) return Expiry::not_yet;
        return now >= total_by ? Expiry::total : Expiry::idle;
    }
    /// A kernel timeout fired (SO_SNDTIMEO, SO_RCVTIMEO set from read_limit):
    /// which deadline it stood for.
    Expiry expired_now() const noexcept {
        return Clock::now() >= total_by ? Expiry::total : Expiry::idle;
    }
};

/// Milliseconds left until `t` (0 when past), clamped to int for poll().
int millis_until(Clock::time_point t) noexcept;
/// The same, with the clock already read.
int millis_until(Clock::time_point t, Clock::time_point now) noexcept;

}  // namespace nous::http::detail
