// The Router (nous/llm/router.hpp): choosing a deployment, reserving its
// budget, the attempt, settling, failing over, waiting for a budget.
// docs/router.md.

#include "nous/llm/router.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include "nous/llm/detail/router_access.hpp"
#include "nous/llm/run_chat.hpp"
#include "router/failover_rules.hpp"
#include "router/limits_store.hpp"
#include "router/redis_limits.hpp"
#include "telemetry/call_observation.hpp"

namespace nous::llm {

namespace {

using detail::Reservation;
using detail::SystemTime;
using nous::http::ErrorCode;

/// Input bytes / 3 + max tokens (1024 when unset): the tokens a call reserves.
std::int64_t estimated_tokens(const ChatRequest& r) {
    std::size_t bytes = r.system.size();
    for (const ChatMessage& m : r.messages) {
        bytes += m.content.size();
        for (const ContentPart& p : m.parts) bytes += p.text.size();
        for (const ToolCall& c : m.tool_calls) bytes += c.arguments.size() + c.name.size();
    }
    for (const ToolSpec& t : r.tools) bytes += t.parameters_schema.size() + t.description.size();
    return static_cast<std::int64_t>(bytes / 3) + r.max_tokens.value_or(1024);
}

bool is_content(const Delta& d) {
    return !d.text.empty() || !d.reasoning.empty() || !d.tool_calls.empty() || !d.refusal.empty();
}

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

/// The budget the provider's own headers report, until their reset.
struct ProviderBudget {
    std::int64_t requests_left = -1, tokens_left = -1;  ///< -1: not reported
    SystemTime requests_reset{}, tokens_reset{};
};

}  // namespace

std::optional<RouteStrategy> route_strategy_from_name(std::string_view name) {
    if (name == "weighted") return RouteStrategy::weighted;
    if (name == "least_busy") return RouteStrategy::least_busy;
    if (name == "latency") return RouteStrategy::latency;
    return std::nullopt;
}

struct Router::Impl {
    /// What this process knows of one deployment beyond the stores: calls in
    /// flight, recent time to first content, the provider's reported budget.
    struct alignas(64) Live {
        std::atomic<std::int64_t> in_flight{0};
        std::atomic<std::int64_t> first_content_us{-1};  ///< moving average; -1: none yet
        std::mutex mutex;                                ///< guards `budget`
        ProviderBudget budget;
    };

    RouterConfig config;
    detail::LocalLimits local;
    std::unique_ptr<detail::RedisLimits> shared;
    std::unique_ptr<Live[]> live;
    std::mutex wait_mutex;  ///< only calls that wait for a budget take it
    std::condition_variable freed;
    std::atomic<int> waiting{0};
    std::atomic<std::uint64_t> choices{0};  ///< latency: counts choices, for its turns

    Impl(RouterConfig c, std::vector<detail::DeploymentLimits> limits)
        : config(std::move(c)),
          local(std::move(limits)),
          live(new Live[config.deployments.size()]) {}

    SystemTime now() const { return config.now ? config.now() : std::chrono::system_clock::now(); }

    /// Why deployment `i` cannot take a call now ("" when it can), and when that may change.
    std::string unavailable(std::size_t i, std::int64_t estimate, SystemTime t,
                            std::optional<SystemTime>& back_at) {
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
            const ProviderBudget& b = l.budget;
            if (b.requests_left == 0 && b.requests_reset > t) {
                note(b.requests_reset);
                return "the provider reports no requests left until " +
                       clock_time(b.requests_reset);
            }
            if (b.tokens_left >= 0 && b.tokens_left < estimate && b.tokens_reset > t) {
                note(b.tokens_reset);
                return "the provider reports " + std::to_string(b.tokens_left) +
                       " tokens left until " + clock_time(b.tokens_reset);
            }
        }
        if (d.max_concurrency &&
            live[i].in_flight.load(std::memory_order_relaxed) >= *d.max_concurrency)
            return "at its max concurrency (" + std::to_string(*d.max_concurrency) + ")";
        return "";
    }

    /// The strategy's pick among `eligible` (not empty).
    std::size_t pick(const std::vector<std::size_t>& eligible) {
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
    bool reserve(std::size_t i, std::int64_t estimate, SystemTime t) {
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
        if (l.budget.tokens_left > 0)
            l.budget.tokens_left -= std::min(l.budget.tokens_left, estimate);
        return true;
    }

    void release(std::size_t i) {
        live[i].in_flight.fetch_sub(1, std::memory_order_acq_rel);
        if (waiting.load(std::memory_order_acquire) > 0) {
            std::lock_guard lock(wait_mutex);
            freed.notify_all();
        }
    }

    /// The attempt's end into the stores, and the provider's headers into its
    /// budget (`parsed`: run_chat's reading of them, used when the router
    /// runs on the system clock, which it was read against).
    void settle(std::size_t i, const detail::Outcome& outcome, const Headers& headers, SystemTime t,
                const std::optional<RateLimit>* parsed = nullptr) {
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

    void note_first_content(std::size_t i, std::chrono::microseconds took) {
        std::atomic<std::int64_t>& avg = live[i].first_content_us;
        const std::int64_t old = avg.load(std::memory_order_relaxed);
        // A moving average that follows the last few calls.
        avg.store(old < 0 ? took.count() : (old * 3 + took.count()) / 4, std::memory_order_relaxed);
    }

    /// Waits until `until` (the router's clock), a deployment's call ends, the
    /// deadline, or a cancel: false when the deadline or a cancel came first,
    /// and at once when `until` is past the deadline (no use waiting for it).
    bool wait(std::optional<SystemTime> until, std::chrono::steady_clock::time_point deadline,
              const nous::http::CancelToken* cancel) {
        auto end = deadline;
        if (until) {
            const auto left = *until - now();
            if (left > deadline - std::chrono::steady_clock::now()) return false;
            end = std::min(end, std::chrono::steady_clock::now() +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::max(left, SystemTime::duration::zero())));
        }
        std::unique_lock lock(wait_mutex);
        waiting.fetch_add(1, std::memory_order_acq_rel);
        // In slices, so that a cancel is seen within 50 ms.
        while (std::chrono::steady_clock::now() < end) {
            if (cancel && cancel->cancelled()) break;
            const auto slice = std::min<std::chrono::steady_clock::duration>(
                end - std::chrono::steady_clock::now(), std::chrono::milliseconds(50));
            if (freed.wait_for(lock, slice) == std::cv_status::no_timeout) break;
        }
        waiting.fetch_sub(1, std::memory_order_acq_rel);
        return std::chrono::steady_clock::now() < deadline && !(cancel && cancel->cancelled());
    }
};

Router::Router(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Router::~Router() = default;

Result<std::unique_ptr<Router>> Router::create(RouterConfig config) {
    auto invalid = [](std::string m) { return Error(ErrorCode::invalid_argument, std::move(m)); };
    if (config.deployments.empty()) return invalid("a router needs at least one deployment");
    std::vector<detail::DeploymentLimits> limits;
    for (const Deployment& d : config.deployments) {
        if (d.name.empty()) return invalid("a deployment needs a name");
        for (const auto& l : limits)
            if (l.name == d.name) return invalid("two deployments are named '" + d.name + "'");
        if (d.model.empty()) return invalid("deployment '" + d.name + "' needs a model");
        if (!(d.weight >= 0)) return invalid("deployment '" + d.name + "': weight below 0");
        for (const auto& limit : {d.rpm, d.tpm, d.max_concurrency})
            if (limit && *limit < 1)
                return invalid("deployment '" + d.name +
                               "': rpm, tpm and max_concurrency must be 1 or more");
        limits.push_back({d.name, d.rpm.value_or(0), d.tpm.value_or(0)});
    }
    if (config.queue_timeout.count() < 0 || config.shared_state_timeout.count() <= 0)
        return invalid("queue_timeout must be 0 or more, shared_state_timeout above 0");
    auto impl = std::make_unique<Impl>(std::move(config), limits);
    if (!impl->config.shared_state.empty()) {
        std::string why;
        impl->shared = detail::RedisLimits::create(impl->config.shared_state, limits,
                                                   impl->config.shared_state_timeout, why);
        if (!impl->shared) return invalid(why);
    }
    return std::unique_ptr<Router>(new Router(std::move(impl)));
}

Result<ChatResult> Router::chat(const ChatRequest& request, const nous::http::Options& options,
                                const std::function<bool(const Delta&)>& on_delta,
                                RouteReport* report) {
    // One observed operation however many attempts: start with the first
    // attempt (or at once when none can be made), then each attempt and
    // failover, and one end or error.
    std::optional<detail::CallObservation> observation;
    if (Observer* observer = detail::observer_of(request, impl_->config.observer.get()))
        observation.emplace(*observer);
    bool started = false;
    auto result =
        route(request, options, on_delta, report, observation ? &*observation : nullptr, started);
    if (observation) {
        if (!started) {
            observation->set_target(request);
            observation->emit(CallEvent::Kind::start);
        }
        observation->finish(result);
    }
    return result;
}

Result<ChatResult> Router::route(const ChatRequest& request, const nous::http::Options& options,
                                 const std::function<bool(const Delta&)>& on_delta,
                                 RouteReport* report, detail::CallObservation* observation,
                                 bool& started) {
    Impl& r = *impl_;
    const auto& ds = r.config.deployments;
    RouteReport local_report;
    RouteReport& out = report ? *report : local_report;
    out = RouteReport{};
    const std::int64_t estimate = estimated_tokens(request);
    const auto deadline = std::chrono::steady_clock::now() + r.config.queue_timeout;
    std::vector<bool> tried(ds.size(), false);
    std::optional<Error> last_failure;
    nous::http::Options attempt_options = options;
    attempt_options.max_retries = 0;  // failover is the retry
    std::vector<std::size_t> eligible;
    eligible.reserve(ds.size());

    for (;;) {
        const SystemTime t = r.now();
        eligible.clear();
        std::optional<SystemTime> back_at;
        for (std::size_t i = 0; i < ds.size(); ++i)
            if (!tried[i] && r.unavailable(i, estimate, t, back_at).empty()) eligible.push_back(i);
        if (eligible.empty()) {
            // Why each deployment did not answer, in the file's order (the
            // reasons written out only now, on this rare path).
            std::string why;
            for (std::size_t i = 0; i < ds.size(); ++i) {
                std::string reason;
                if (tried[i]) {
                    for (const RouteAttempt& a : out.attempts)
                        if (a.deployment == ds[i].name) reason = a.reason;
                } else {
                    reason = r.unavailable(i, estimate, t, back_at);
                }
                why += (why.empty() ? "" : "; ") + ds[i].name + ": " + reason;
            }
            if (last_failure) {  // every one tried failed, the others cannot take it
                Error e = *last_failure;
                e.message = "every deployment failed: " + why;
                return e;
            }
            if (r.wait(back_at, deadline, options.cancel)) continue;
            if (options.cancel && options.cancel->cancelled())
                return Error(ErrorCode::cancelled, "cancelled while waiting for a deployment");
            return Error(ErrorCode::saturated, "no deployment can take the call: " + why);
        }
        const std::size_t i = r.pick(eligible);
        if (!r.reserve(i, estimate, t)) continue;  // taken meanwhile, or the shared count says no
        const Deployment& d = ds[i];

        ChatRequest routed = request;
        routed.provider = d.provider;
        routed.base_url = d.base_url;
        routed.api_key = d.api_key;
        routed.model = d.model;
        if (observation) {
            observation->set_target(routed, d.name);
            observation->new_attempt();
            if (!started) observation->emit(CallEvent::Kind::start);
            started = true;
            observation->emit(CallEvent::Kind::attempt);
        }
        bool delivered = false;
        const auto start = std::chrono::steady_clock::now();
        std::function<bool(const Delta&)> watched;
        if (on_delta)
            watched = [&](const Delta& delta) {
                if (!delivered && is_content(delta)) {
                    delivered = true;
                    r.note_first_content(i, std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - start));
                }
                return on_delta(delta);
            };
        auto result = detail::run_chat_observed(routed, attempt_options, watched, observation);
        // Without a callback the whole answer stands in for the first content
        // (a quick failure must not make a deployment look fast).
        if (result && (!on_delta || !request.stream))
            r.note_first_content(i, std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - start));
        const SystemTime end = r.now();
        detail::Outcome outcome;
        if (result && !(result->stream_error && !delivered)) {
            if (result->usage)
                outcome.token_correction =
                    result->usage->input_tokens + result->usage->output_tokens - estimate;
            r.settle(i, outcome, result->headers, end, &result->rate_limit);
            r.release(i);
            if (report) {  // the caller's report: the answering attempt too
                out.deployment = d.name;
                out.attempts.push_back({d.name, ""});
            }
            return result;
        }
        const detail::Failure failure = result
                                            ? detail::classify_stream_error(*result->stream_error)
                                            : detail::classify(result.error(), end);
        r.settle(i, failure.outcome, result ? result->headers : result.error().headers, end);
        r.release(i);
        out.attempts.push_back({d.name, failure.reason});
        if (!result && (delivered || !failure.failover)) return result.error();  // as it is
        if (observation) observation->failover(failure.reason);
        tried[i] = true;
        if (result) {  // the provider's error event, before any content
            Error e(ErrorCode::protocol, failure.reason);
            e.request_id = result->request_id;
            last_failure = e;
        } else {
            last_failure = result.error();
        }
    }
}

bool detail::RouterAccess::route_once(Router& router, std::int64_t estimate) {
    Router::Impl& r = *router.impl_;
    const SystemTime t = r.now();
    std::vector<std::size_t> eligible;
    std::optional<SystemTime> back_at;
    for (std::size_t i = 0; i < r.config.deployments.size(); ++i)
        if (r.unavailable(i, estimate, t, back_at).empty()) eligible.push_back(i);
    if (eligible.empty()) return false;
    const std::size_t i = r.pick(eligible);
    if (!r.reserve(i, estimate, t)) return false;
    r.settle(i, detail::Outcome{}, {}, t);
    r.release(i);
    return true;
}

}  // namespace nous::llm
