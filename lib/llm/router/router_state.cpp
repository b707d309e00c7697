// A Router's state and the steps of a call on it (router_state.hpp).

#include "router/router_state.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>

namespace nous::llm {

using detail::Reservation;
using detail::SystemTime;

namespace {

/// "18:07:00Z": when a cooldown or a window ends, as the messages say it.
std::string clock_time(SystemTime t) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char out[16];
    std::strftime(out, sizeof out, "%H:%M:%SZ", &utc);
    return out;
}

std::string seconds_until(SystemTime t, SystemTime now) {
    const double s = std::chrono::duration<double>(t - now).count();
    char out[32];
    std::snprintf(out, sizeof out, "%.1f s", std::max(0.0, s));
    return out;
}

}  // namespace

/// Why deployment `i` cannot take a call now ("" when it can), and when that may change.
std::string Router::Impl::unavailable(std::size_t i, std::int64_t estimate, SystemTime t,
                                      std::optional<SystemTime>& back_at, bool* slot_bound) {
    const Deployment& d = config.deployments[i];
    const Reservation r = local.peek(i, estimate, t);
    auto note = [&](SystemTime when) { back_at = back_at ? std::min(*back_at, when) : when; };
    if (r.kind == Reservation::Kind::cooling) {
        note(r.until);
        return "cooling down until " + clock_time(r.until) + " (" + seconds_until(r.until, t) +
               " more)";
    }
    if (r.kind == Reservation::Kind::no_budget) {
        note(r.until);
        return "no budget this minute: " + std::to_string(r.requests_used) + " of " +
               (d.rpm ? std::to_string(*d.rpm) : "unlimited") + " requests, " +
               std::to_string(r.tokens_used) + " of " +
               (d.tpm ? std::to_string(*d.tpm) : "unlimited") + " tokens; back at " +
               clock_time(r.until);
    }
    {
        Live& l = live[i];
        std::lock_guard lock(l.mutex);
        const detail::ProviderBudget& b = l.budget;
        if (b.requests_left == 0 && b.requests_reset > t) {
            note(b.requests_reset);
            return "the provider reports no requests left until " + clock_time(b.requests_reset);
        }
        if (b.tokens_left >= 0 && b.tokens_left < estimate && b.tokens_reset > t) {
            note(b.tokens_reset);
            return "the provider reports " + std::to_string(b.tokens_left) + " tokens left until " +
                   clock_time(b.tokens_reset);
        }
    }
    if (d.max_concurrency &&
        live[i].in_flight.load(std::memory_order_relaxed) >= *d.max_concurrency) {
        if (slot_bound) *slot_bound = true;
        return "at its max concurrency (" + std::to_string(*d.max_concurrency) + ")";
    }
    return "";
}

/// The strategy's pick among `eligible` (not empty).
std::size_t Router::Impl::pick(const std::vector<std::size_t>& eligible) {
    thread_local std::minstd_rand random(std::random_device{}());
    const auto& ds = config.deployments;
    switch (config.strategy) {
        case RouteStrategy::least_busy: {
            std::size_t best = eligible[0];
            for (std::size_t i : eligible)
                if (live[i].in_flight.load(std::memory_order_relaxed) <
                    live[best].in_flight.load(std::memory_order_relaxed))
                    best = i;
            return best;
        }
        case RouteStrategy::latency: {
            // Every tenth choice another one in turn, so that a slow
            // deployment that got faster is seen again.
            const std::uint64_t n = choices.fetch_add(1, std::memory_order_relaxed);
            if (eligible.size() > 1 && n % 10 == 9) return eligible[(n / 10) % eligible.size()];
            std::size_t best = eligible[0];
            for (std::size_t i : eligible) {
                const auto us = live[i].first_content_us.load(std::memory_order_relaxed);
                if (us < 0) return i;  // never measured: measure it
                if (us < live[best].first_content_us.load(std::memory_order_relaxed)) best = i;
            }
            return best;
        }
        case RouteStrategy::weighted:
            break;
    }
    double total = 0;
    for (std::size_t i : eligible) total += ds[i].weight;
    if (total <= 0) return eligible[0];  // only fallbacks left: in the file's order
    double x = std::uniform_real_distribution<double>(0, total)(random);
    for (std::size_t i : eligible) {
        if (ds[i].weight <= 0) continue;
        if (x < ds[i].weight) return i;
        x -= ds[i].weight;
    }
    for (std::size_t i = eligible.size(); i-- > 0;)
        if (ds[eligible[i]].weight > 0) return eligible[i];
    return eligible[0];
}

/// Reserves deployment `i`: its concurrency slot, then its budget in the
/// shared store (or, when there is none or it is down, the local one).
bool Router::Impl::reserve(std::size_t i, std::int64_t estimate, SystemTime t) {
    const Deployment& d = config.deployments[i];
    Live& l = live[i];
    const std::int64_t before = l.in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (d.max_concurrency && before >= *d.max_concurrency) {
        release(i);
        return false;
    }
    std::optional<Reservation> r;
    if (shared && (r = shared->reserve(i, estimate, t)))
        local.mirror(i, *r, estimate, t);
    else
        r = local.reserve(i, estimate, t);
    if (r->kind != Reservation::Kind::reserved) {
        release(i);
        return false;
    }
    std::lock_guard lock(l.mutex);
    if (l.budget.requests_left > 0) --l.budget.requests_left;
    if (l.budget.tokens_left > 0) l.budget.tokens_left -= std::min(l.budget.tokens_left, estimate);
    return true;
}

void Router::Impl::release(std::size_t i) {
    live[i].in_flight.fetch_sub(1, std::memory_order_acq_rel);
    // The handshake with wait(), both sides sequentially consistent: this
    // counts the release, then looks for waiters; a waiter registers, then
    // looks at the count. One of the two sees the other, so a release is
    // never missed: either the waiter finds the count moved, or this finds
    // the waiter and wakes it (under the mutex it holds until it sleeps).
    releases.fetch_add(1);
    if (waiting.load() > 0) {
        std::lock_guard lock(wait_mutex);
        freed.notify_all();
    }
}

/// The attempt's end into the stores, and the provider's headers into its
/// budget (`parsed`: run_chat's reading of them, used when the router
/// runs on the system clock, which it was read against).
void Router::Impl::settle(std::size_t i, const detail::Outcome& outcome, const Headers& headers,
                          SystemTime t, const std::optional<RateLimit>* parsed) {
    std::optional<SystemTime> cooled;
    if (shared) cooled = shared->settle(i, outcome, t);
    local.settle(i, outcome, t);
    if (cooled) local.mirror_cooldown(i, *cooled);
    const std::optional<RateLimit> limit =
        parsed && !config.now ? *parsed : parse_rate_limit(headers, t);
    if (limit) {
        Live& l = live[i];
        std::lock_guard lock(l.mutex);
        if (limit->requests_remaining && limit->requests_reset) {
            l.budget.requests_left = *limit->requests_remaining;
            l.budget.requests_reset = *limit->requests_reset;
        }
        if (limit->tokens_remaining && limit->tokens_reset) {
            l.budget.tokens_left = *limit->tokens_remaining;
            l.budget.tokens_reset = *limit->tokens_reset;
        }
    }
}

void Router::Impl::note_first_content(std::size_t i, std::chrono::microseconds took) {
    std::atomic<std::int64_t>& avg = live[i].first_content_us;
    const std::int64_t old = avg.load(std::memory_order_relaxed);
    // A moving average that follows the last few calls.
    avg.store(old < 0 ? took.count() : (old * 3 + took.count()) / 4, std::memory_order_relaxed);
}

/// Waits until `until` (the router's clock), a slot is released, the
/// deadline, or a cancel (router_state.hpp).
bool Router::Impl::wait(std::optional<SystemTime> until, bool slot_bound,
                        std::uint64_t releases_seen, std::chrono::steady_clock::time_point deadline,
                        const nous::http::CancelToken* cancel) {
    auto end = deadline;
    if (until) {
        const auto left = *until - now();
        // Nothing known comes back in time: unless a call ending may free a
        // slot, waiting is no use.
        if (left > deadline - std::chrono::steady_clock::now() && !slot_bound) return false;
        end = std::min(end, std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::max(left, SystemTime::duration::zero())));
    }
    // No slices: a release notifies, a cancel notifies (registered before
    // the lock: a cancel takes the token's lock, then this one), and the end
    // ends the wait. 50 ms slices woke every waiting call twenty times a
    // second for nothing.
    nous::http::CancelWakeup wake_on_cancel(cancel, wait_mutex, freed);
    std::unique_lock lock(wait_mutex);
    waiting.fetch_add(1);
    freed.wait_until(lock, end, [&] {
        return releases.load() != releases_seen || (cancel && cancel->cancelled());
    });
    waiting.fetch_sub(1);
    return std::chrono::steady_clock::now() < deadline && !(cancel && cancel->cancelled());
}

}  // namespace nous::llm
