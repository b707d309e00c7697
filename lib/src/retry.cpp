#include "retry.hpp"

#include <random>
#include <thread>

#include "cancel.hpp"

namespace nous::http::detail {

bool is_retryable(const Error& error) noexcept {
    switch (error.code) {
        case ErrorCode::connect_failed:
        case ErrorCode::timeout_connect:
            return true;
        case ErrorCode::http_status:
            return error.status == 408 || error.status == 409 || error.status == 429 || error.status >= 500;
        default:
            return false;
    }
}

Milliseconds backoff_delay(int attempt, double random01) noexcept {
    long long base = retry_base_delay.count() << std::min(attempt, 10);
    base = std::min<long long>(base, retry_max_backoff.count());
    double jitter = 1.0 - 0.25 * random01;  // as the OpenAI SDKs do
    return Milliseconds(static_cast<long long>(static_cast<double>(base) * jitter));
}

namespace {

double default_random() {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

/// Sleeps in short slices so that a cancel ends the wait promptly.
void default_sleep(Milliseconds delay, const CancelToken* cancel) {
    auto until = Clock::now() + delay;
    while (!is_cancelled(cancel)) {
        auto now = Clock::now();
        if (now >= until) return;
        std::this_thread::sleep_for(std::min<Clock::duration>(until - now, std::chrono::milliseconds(20)));
    }
}

}  // namespace

std::optional<Milliseconds> retry_delay(Error& error, int attempt, int max_retries, const RetryHooks* hooks,
                                        Clock::time_point now, Clock::time_point total_by) {
    if (attempt >= max_retries || !is_retryable(error)) return std::nullopt;
    Milliseconds delay;
    if (error.retry_after) {
        if (*error.retry_after > retry_max_hint) {
            error.message += " (server asks to retry after " + std::to_string(error.retry_after->count()) +
                             " ms: longer than we wait)";
            return std::nullopt;
        }
        delay = *error.retry_after;
    } else {
        delay = backoff_delay(attempt, hooks && hooks->random ? hooks->random() : default_random());
    }
    if (total_by != Clock::time_point::max() && now + delay >= total_by) return std::nullopt;
    return delay;
}

void retry_sleep(Milliseconds delay, const RetryHooks* hooks, const CancelToken* cancel) {
    if (hooks && hooks->sleep)
        hooks->sleep(delay);
    else
        default_sleep(delay, cancel);
}

Result<Response> run_with_retries(const std::function<Result<Response>(const Options&)>& attempt,
                                  const Options& options, int max_retries) {
    const RetryHooks* hooks = options.retry_hooks;
    auto now = [hooks] { return hooks && hooks->now ? hooks->now() : Clock::now(); };
    const auto start = now();
    const bool has_total = options.total_timeout.has_value();
    const Clock::time_point total_by = has_total ? start + *options.total_timeout : Clock::time_point::max();
    // A copy of the options only when the total deadline must shrink per attempt.
    std::optional<Options> shrunk;
    if (has_total) shrunk.emplace(options);
    for (int n = 0;; ++n) {
        if (has_total) {
            auto left = std::chrono::duration_cast<Milliseconds>(total_by - now());
            if (left.count() <= 0) return Error(ErrorCode::timeout_total, "total deadline passed before the request");
            shrunk->total_timeout = left;
        }
        Result<Response> result = attempt(has_total ? *shrunk : options);
        if (result.ok()) return result;
        Error& error = result.error();
        auto delay = retry_delay(error, n, max_retries, hooks, now(), total_by);
        if (!delay) return result;
        if (is_cancelled(options.cancel)) return Error(ErrorCode::cancelled, "cancelled before retrying");
        log(LogLevel::info, "retrying after " + std::to_string(delay->count()) + " ms: " + error.message);
        retry_sleep(*delay, hooks, options.cancel);
        if (is_cancelled(options.cancel)) return Error(ErrorCode::cancelled, "cancelled while waiting to retry");
    }
}

}  // namespace nous::http::detail
