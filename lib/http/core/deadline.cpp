// Deadline arithmetic for poll() and socket timeouts.

#include "core/deadline.hpp"

namespace nous::http::detail {

int millis_until(Clock::time_point t) noexcept {
    if (t == Clock::time_point::max()) return 1 << 30;
    return millis_until(t, Clock::now());
}

int millis_until(Clock::time_point t, Clock::time_point now) noexcept {
    if (t == Clock::time_point::max()) return 1 << 30;
    if (t <= now) return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
    return ms > (1 << 30) ? (1 << 30) : static_cast<int>(ms);
}

}  // namespace nous::http::detail
