#pragma once
// The retry policy: max_retries on connect failures and 408/409/429/5xx,
// backoff 0.5 s * 2^n capped at 8 s with jitter, server hints honoured up to
// 60 s, never past the total deadline.

#include <functional>

#include "internal.hpp"
#include "nous/http/client.hpp"

namespace nous::http::detail {

inline constexpr Milliseconds retry_base_delay{500};
inline constexpr Milliseconds retry_max_backoff{8000};
inline constexpr Milliseconds retry_max_hint{60000};

/// Whether an error may be retried (before any body byte is consumed).
bool is_retryable(const Error& error) noexcept;

/// Backoff for retry number `attempt` (0-based): 0.5 s * 2^n, capped at 8 s,
/// scaled by a jitter factor in (0.75, 1] drawn from `random01`.
Milliseconds backoff_delay(int attempt, double random01) noexcept;

/// The delay before retry number `attempt` (0-based) of a failed request, or
/// nullopt when it must not be retried: not retryable, retries used up, a
/// server hint over 60 s (noted in the message), or past `total_by`.
std::optional<Milliseconds> retry_delay(Error& error, int attempt, int max_retries, const RetryHooks* hooks,
                                        Clock::time_point now, Clock::time_point total_by);

/// Sleeps `delay` through the hooks, or in short slices that notice a cancel.
void retry_sleep(Milliseconds delay, const RetryHooks* hooks, const CancelToken* cancel);

/// Runs `attempt(options_for_this_attempt)` up to 1 + max_retries times.
Result<Response> run_with_retries(const std::function<Result<Response>(const Options&)>& attempt,
                                  const Options& options, int max_retries);

}  // namespace nous::http::detail
