#pragma once
// The retry policy and the one retry runner that post() and both stream
// backends use: max_retries on connect failures, lost requests and
// 408/409/429/5xx, backoff 0.5 s * 2^n capped at 8 s with jitter, server hints
// honoured up to 60 s, never past the total deadline.

#include <functional>
#include <optional>

#include "core/deadline.hpp"
#include "core/limits.hpp"
#include "nous/http/error.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

using limits::retry_base_delay;
using limits::retry_max_backoff;
using limits::retry_max_hint;

/// Whether an error may be retried (before any body byte is consumed).
bool is_retryable(const Error& error) noexcept;

/// Backoff for retry number `attempt` (0-based): 0.5 s * 2^n, capped at 8 s,
/// scaled by a jitter factor in (0.75, 1] drawn from `random01`.
Milliseconds backoff_delay(int attempt, double random01) noexcept;

/// The delay before retry number `attempt` (0-based) of a failed request, or
/// nullopt when it must not be retried: not retryable, retries used up, a
/// server hint over 60 s (noted in the message), or past `total_by`.
std::optional<Milliseconds> retry_delay(Error& error, int attempt, int max_retries,
                                        const testing::Hooks* hooks, Clock::time_point now,
                                        Clock::time_point total_by);

/// What the runner needs of one call.
struct RetryRun {
    int max_retries = 0;
    std::optional<Milliseconds> total_timeout;
    const testing::Hooks* hooks = nullptr;
    const CancelToken* cancel = nullptr;
    const char* what = "request";  ///< for the log line
};

/// Runs `attempt(total_by)` up to 1 + max_retries times, where `total_by` is
/// what is left of the total deadline on the steady clock (max() when none).
/// Returns nullopt after a successful attempt, else the last error.
std::optional<Error> run_with_retries(
    const std::function<std::optional<Error>(Clock::time_point)>& attempt, const RetryRun& run);

}  // namespace nous::http::detail
