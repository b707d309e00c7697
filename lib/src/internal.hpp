#pragma once
// Internal helpers shared by the sources (not installed).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nous/http/error.hpp"
#include "nous/http/log.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

using Clock = std::chrono::steady_clock;

// ---- logging ----
bool log_enabled(LogLevel level) noexcept;
void log(LogLevel level, std::string_view message);
/// Logs `message` at warning level only the first time `key` is seen in this process.
void warn_once(const std::string& key, std::string_view message);
/// At most 500 bytes of a body, for logs.
std::string truncate_for_log(std::string_view body);

// ---- strings ----
std::string to_lower(std::string_view s);
std::string_view trim(std::string_view s) noexcept;

// ---- deadlines ----
/// The connect deadline and the optional total deadline of one call.
struct Deadlines {
    Clock::time_point connect_by = Clock::time_point::max();
    Clock::time_point total_by = Clock::time_point::max();
    Milliseconds idle{defaults::read_timeout};

    /// Earliest of connect deadline and total deadline.
    Clock::time_point connect_limit() const noexcept {
        return connect_by < total_by ? connect_by : total_by;
    }
    /// Error code for a connect-phase timeout at `now`.
    ErrorCode connect_timeout_code() const noexcept {
        return total_by <= connect_by ? ErrorCode::timeout_total : ErrorCode::timeout_connect;
    }
};

/// Milliseconds left until `t` (0 when past), clamped to int for poll().
int millis_until(Clock::time_point t) noexcept;

// ---- counters that tests read (our own write/read paths) ----
struct IoCounters {
    std::uint64_t send_calls = 0;  ///< send/sendmsg/SSL_write calls made by our write path
    std::uint64_t recv_calls = 0;  ///< recv/SSL_read calls made by our read path
};
IoCounters io_counters() noexcept;
void count_send() noexcept;
void count_recv() noexcept;

}  // namespace nous::http::detail
