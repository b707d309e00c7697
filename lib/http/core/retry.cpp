// The retry policy (what is retried, backoff, server hints) and its runner.

#include "core/retry.hpp"

#include <memory>
#include <random>
#include <thread>

#include "core/cancel.hpp"
#include "core/log.hpp"
#include "nous/http/client.hpp"
#include "nous/http/testing.hpp"

namespace nous::http::detail {

bool is_retryable(const Error& error) noexcept {
    // No wait fixes an exhausted quota.
    if (error.quota_exhausted) return false;
    // The server's own word wins over our status rules, as the providers' SDKs
    // honour it (`x-should-retry: true|false`).
    if (error.code == ErrorCode::http_status)
        for (const auto& [name, value] : error.headers)
            if (header_name_equals(name, "x-should-retry")) {
                if (value == "true") return true;
                if (value == "false") return false;
            }
    switch (error.code) {
        case ErrorCode::connect_failed:
        case ErrorCode::timeout_connect:
        // The server may have acted on it: retries carry one Idempotency-Key
        // (openai-python retries these too).
        case ErrorCode::connection_closed:
            return true;
        case ErrorCode::http_status:
            return error.status == 408 || error.status == 409 || error.status == 429 ||
                   error.status >= 500;
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
    // Per thread, on the heap, made on a thread's first retry: a thread_local
    // engine itself (2.5 KB of state) sat in the static TLS block that glibc
    // zeroes for every thread of a program linking us, stream readers and
    // the application's own threads alike.
    thread_local std::unique_ptr<std::mt19937_64> engine;
    if (!engine) engine = std::make_unique<std::mt19937_64>(std::random_device{}());
    return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
}

/// Sleeps in short slices so that a cancel ends the wait promptly.
void default_sleep(Milliseconds delay, const CancelToken* cancel) {
    auto until = Clock::now() + delay;
    while (!is_cancelled(cancel)) {
        auto now = Clock::now();
        if (now >= until) return;
        std::this_thread::sleep_for(
            std::min<Clock::duration>(until - now, std::chrono::milliseconds(20)));
    }
}

}  // namespace

std::optional<Milliseconds> retry_delay(Error& error, int attempt, int max_retries,
                                        const testing::Hooks* hooks, Clock::time_point now,
                                        Clock::time_point total_by) {
    if (attempt >= max_retries || !is_retryable(error)) return std::nullopt;
    Milliseconds delay;
    if (error.retry_after) {
        if (*error.retry_after > retry_max_hint) {
            error.message += " (server asks to retry after " +
                             std::to_string(error.retry_after->count()) +
                             " ms: longer than we wait)";
            return std::nullopt;
        }
        delay = *error.retry_after;
    } else {
        delay = backoff_delay(attempt, hooks && hooks->random ? hooks->random() : default_random());
    }
    if (total_by != Clock::time_point::max() && saturating_add(now, delay) >= total_by)
        return std::nullopt;
    return delay;
}

namespace {

void retry_sleep(Milliseconds delay, const testing::Hooks* hooks, const CancelToken* cancel) {
    if (hooks && hooks->sleep)
        hooks->sleep(delay);
    else
        default_sleep(delay, cancel);
}

}  // namespace

std::optional<Error> run_with_retries(
    const std::function<std::optional<Error>(Clock::time_point)>& attempt, const RetryRun& run) {
    const testing::Hooks* hooks = run.hooks;
    auto now = [hooks] { return hooks && hooks->now ? hooks->now() : Clock::now(); };
    // The policy's clock may be a test's; deadlines handed to attempts are on the steady clock.
    const auto start = now();
    const bool has_total = run.total_timeout.has_value();
    const Clock::time_point policy_total_by =
        has_total ? saturating_add(start, *run.total_timeout) : Clock::time_point::max();
    for (int n = 0;; ++n) {
        Clock::time_point total_by = Clock::time_point::max();
        if (has_total) {
            auto left = policy_total_by - now();
            if (left <= Clock::duration::zero())
                return Error(ErrorCode::timeout_total,
                             "total deadline passed before the " + std::string(run.what));
            total_by = saturating_add(Clock::now(), left);
        }
        std::optional<Error> error = attempt(total_by);
        if (!error) return std::nullopt;
        auto delay = retry_delay(*error, n, run.max_retries, hooks, now(), policy_total_by);
        if (!delay) return error;
        if (is_cancelled(run.cancel))
            return Error(ErrorCode::cancelled, "cancelled before retrying");
        log(LogLevel::info, std::string(run.what) + ": retrying after " +
                                std::to_string(delay->count()) + " ms: " + error->message);
        retry_sleep(*delay, hooks, run.cancel);
        if (is_cancelled(run.cancel))
            return Error(ErrorCode::cancelled, "cancelled while waiting to retry");
    }
}

}  // namespace nous::http::detail
