#pragma once
// What a Router keeps (nous_llm internal): its configuration, the stores of
// budgets and cooldowns, and what this process knows of each deployment
// beyond them (calls in flight, recent time to first content, the provider's
// reported budget); and the steps of a call on them: why a deployment cannot
// take a call, the strategy's pick, reserve, settle, release, the wait.
// router.cpp runs a call's attempts with them. docs/router.md.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nous/llm/router.hpp"
#include "router/limits_store.hpp"
#include "router/redis_limits.hpp"

namespace nous::llm {

namespace detail {
/// The budget the provider's own headers report, until their reset.
struct ProviderBudget {
    std::int64_t requests_left = -1, tokens_left = -1;  ///< -1: not reported
    SystemTime requests_reset{}, tokens_reset{};
};
}  // namespace detail

struct Router::Impl {
    /// What this process knows of one deployment beyond the stores: calls in
    /// flight, recent time to first content, the provider's reported budget.
    struct alignas(64) Live {
        std::atomic<std::int64_t> in_flight{0};
        std::atomic<std::int64_t> first_content_us{-1};  ///< moving average; -1: none yet
        std::mutex mutex;                                ///< guards `budget`
        detail::ProviderBudget budget;
    };

    RouterConfig config;
    detail::LocalLimits local;
    std::unique_ptr<detail::RedisLimits> shared;
    std::unique_ptr<Live[]> live;
    std::mutex wait_mutex;  ///< only calls that wait for a budget take it
    std::condition_variable freed;
    std::atomic<int> waiting{0};
    /// Counts the slots released: a waiter that saw one count, and finds
    /// another once it is registered in `waiting`, goes at once (the
    /// handshake in release() and wait()).
    std::atomic<std::uint64_t> releases{0};
    std::atomic<std::uint64_t> choices{0};  ///< latency: counts choices, for its turns

    Impl(RouterConfig c, std::vector<detail::DeploymentLimits> limits)
        : config(std::move(c)),
          local(std::move(limits)),
          live(new Live[config.deployments.size()]) {}

    detail::SystemTime now() const {
        return config.now ? config.now() : std::chrono::system_clock::now();
    }

    /// Why deployment `i` cannot take a call now ("" when it can), and when
    /// that may change: `back_at` the earliest known time, `slot_bound` set
    /// when it is at its max_concurrency (a call ending frees it, at no known time).
    std::string unavailable(std::size_t i, std::int64_t estimate, detail::SystemTime t,
                            std::optional<detail::SystemTime>& back_at, bool* slot_bound = nullptr);
    /// The strategy's pick among `eligible` (not empty).
    std::size_t pick(const std::vector<std::size_t>& eligible);
    /// Reserves deployment `i`: its concurrency slot, then its budget in the
    /// shared store (or, when there is none or it is down, the local one).
    bool reserve(std::size_t i, std::int64_t estimate, detail::SystemTime t);
    void release(std::size_t i);
    /// A reserved slot, released however the attempt ends (an exception included).
    struct Slot {
        Impl& router;
        std::size_t index;
        Slot(Impl& r, std::size_t i) : router(r), index(i) {}
        ~Slot() { router.release(index); }
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
    };
    /// The attempt's end into the stores, and the provider's headers into its
    /// budget (`parsed`: run_chat's reading of them, used when the router
    /// runs on the system clock, which it was read against).
    void settle(std::size_t i, const detail::Outcome& outcome, const Headers& headers,
                detail::SystemTime t, const std::optional<RateLimit>* parsed = nullptr);
    void note_first_content(std::size_t i, std::chrono::microseconds took);
    /// Waits until `until` (the router's clock), a slot is released (any
    /// since `releases_seen` counts), the deadline, or a cancel: false when
    /// the deadline or a cancel came first, and at once when `until` is past
    /// the deadline and no release can help (`slot_bound` false).
    bool wait(std::optional<detail::SystemTime> until, bool slot_bound, std::uint64_t releases_seen,
              std::chrono::steady_clock::time_point deadline,
              const nous::http::CancelToken* cancel);
};

}  // namespace nous::llm
