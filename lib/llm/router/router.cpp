// The Router (nous/llm/router.hpp): its creation, and a call's attempts
// (choose, reserve, run, settle, fail over or wait) on its state
// (router_state.hpp). docs/router.md.

#include "nous/llm/router.hpp"

#include <chrono>

#include "nous/llm/detail/router_access.hpp"
#include "nous/llm/run_chat.hpp"
#include "router/failover_rules.hpp"
#include "router/router_state.hpp"
#include "telemetry/call_observation.hpp"

namespace nous::llm {

using detail::SystemTime;

namespace {

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

}  // namespace

std::optional<RouteStrategy> route_strategy_from_name(std::string_view name) {
    if (name == "weighted") return RouteStrategy::weighted;
    if (name == "least_busy") return RouteStrategy::least_busy;
    if (name == "latency") return RouteStrategy::latency;
    return std::nullopt;
}

Router::Router(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Router::~Router() = default;

/// The largest weight: weights are relative, and a million deployments
/// of it still sum to a finite double.
constexpr double kMaxWeight = 1e9;

Result<std::unique_ptr<Router>> Router::create(RouterConfig config) {
    auto invalid = [](std::string m) { return Error(ErrorCode::invalid_argument, std::move(m)); };
    if (config.deployments.empty()) return invalid("a router needs at least one deployment");
    std::vector<detail::DeploymentLimits> limits;
    for (const Deployment& d : config.deployments) {
        if (d.name.empty()) return invalid("a deployment needs a name");
        for (const auto& l : limits)
            if (l.name == d.name) return invalid("two deployments are named '" + d.name + "'");
        if (d.model.empty()) return invalid("deployment '" + d.name + "' needs a model");
        // Bounded, so that no sum of weights overflows to infinity (the draw
        // in proportion to them would then pick by accident).
        if (!(d.weight >= 0 && d.weight <= kMaxWeight))
            return invalid("deployment '" + d.name + "': weight must be from 0 to 1e9");
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
    return chat(ChatRequest(request), options, on_delta, report);  // the call's one copy
}

Result<ChatResult> Router::chat(ChatRequest&& request, const nous::http::Options& options,
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
        if (!started) {  // no attempt was made: the request is as the caller gave it
            observation->set_target(request);
            observation->emit(CallEvent::Kind::start);
        }
        observation->finish(result);
    }
    return result;
}

Result<ChatResult> Router::route(ChatRequest& working, const nous::http::Options& options,
                                 const std::function<bool(const Delta&)>& on_delta,
                                 RouteReport* report, detail::CallObservation* observation,
                                 bool& started) {
    Impl& r = *impl_;
    const auto& ds = r.config.deployments;
    RouteReport local_report;
    RouteReport& out = report ? *report : local_report;
    out = RouteReport{};
    const std::int64_t estimate = estimated_tokens(working);
    const auto deadline = std::chrono::steady_clock::now() + r.config.queue_timeout;
    std::vector<bool> tried(ds.size(), false);
    std::optional<Error> last_failure;
    nous::http::Options attempt_options = options;
    attempt_options.max_retries = 0;  // failover is the retry
    std::vector<std::size_t> eligible;
    eligible.reserve(ds.size());
    std::optional<double> spent;  // the cost of the attempts that reported usage

    for (;;) {
        // Read before the deployments are looked at: a release after this
        // point ends the wait below at once (no wake-up lost between the
        // look and the wait).
        const std::uint64_t releases_seen = r.releases.load();
        const SystemTime t = r.now();
        eligible.clear();
        std::optional<SystemTime> back_at;
        bool slot_bound = false;  // one is at its max_concurrency: a call ending frees it
        for (std::size_t i = 0; i < ds.size(); ++i)
            if (!tried[i] && r.unavailable(i, estimate, t, back_at, &slot_bound).empty())
                eligible.push_back(i);
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
            if (r.wait(back_at, slot_bound, releases_seen, deadline, options.cancel)) continue;
            if (options.cancel && options.cancel->cancelled())
                return Error(ErrorCode::cancelled, "cancelled while waiting for a deployment");
            return Error(ErrorCode::saturated, "no deployment can take the call: " + why);
        }
        const std::size_t i = r.pick(eligible);
        if (!r.reserve(i, estimate, t)) continue;  // taken meanwhile, or the shared count says no
        // The slot is released on every way out of this attempt: a callback
        // that throws must not keep it for ever (N throws would saturate a
        // deployment of max_concurrency N).
        Router::Impl::Slot slot(r, i);
        const Deployment& d = ds[i];

        // The deployment's fields on the call's own request: the
        // conversation is never copied per attempt.
        ChatRequest& routed = working;
        routed.provider = d.provider;
        routed.base_url = d.base_url;
        routed.api_key = d.api_key;
        routed.model = d.model;
        routed.api_version = d.api_version;
        routed.region = d.region;
        routed.project = d.project;
        routed.location = d.location;
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
                if (!delivered && detail::is_content(delta)) {
                    delivered = true;
                    r.note_first_content(i, std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - start));
                }
                return on_delta(delta);
            };
        auto result = detail::run_chat_observed(routed, attempt_options, watched, observation);
        // Without a callback the whole answer stands in for the first content
        // (a quick failure must not make a deployment look fast).
        if (result && (!on_delta || !working.stream))
            r.note_first_content(i, std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - start));
        const SystemTime end = r.now();
        if (result && result->cost) spent = spent.value_or(0) + *result->cost;
        detail::Outcome outcome;
        outcome.window_minute = detail::minute_of(t);  // the reservation's, not the end's
        if (result && !(result->stream_error && !delivered)) {
            if (result->usage)
                outcome.token_correction =
                    result->usage->input_tokens + result->usage->output_tokens - estimate;
            r.settle(i, outcome, result->headers, end, &result->rate_limit);
            result->cost = spent;
            if (report) {  // the caller's report: the answering attempt too
                out.deployment = d.name;
                out.attempts.push_back({d.name, ""});
            }
            return result;
        }
        detail::Failure failure = result ? detail::classify_stream_error(*result->stream_error)
                                         : detail::classify(result.error(), end);
        failure.outcome.window_minute = outcome.window_minute;
        r.settle(i, failure.outcome, result ? result->headers : result.error().headers, end);
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

int detail::RouterAccess::waiting(const Router& router) { return router.impl_->waiting.load(); }

}  // namespace nous::llm
