#pragma once
// A Router runs a chat call on one of several deployments that serve one
// logical model: chosen by strategy, moved to the next on a failure before
// any content reached the caller, deployments that failed cooled down, and
// each one's per-minute budget kept, locally or shared by a fleet through
// Redis. Library nous_llm; docs/router.md.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/options.hpp"
#include "nous/llm/delta.hpp"
#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

namespace detail {
struct RouterAccess;
class CallObservation;
}  // namespace detail

/// One place a call can go: a provider endpoint, its key and its model.
/// Every member has an initializer, so a designated initializer may leave
/// any out without -Wmissing-field-initializers.
struct Deployment {
    std::string name{};  ///< required, unique: how errors, logs and Redis keys name it
    Provider provider = Provider::openai;
    std::string base_url{};  ///< empty: default_base_url(provider)
    std::string api_key{};   ///< empty: no credential header
    std::string model{};     ///< required: replaces the request's
    /// Azure: the API version on the query; replaces the request's (empty: none).
    std::string api_version{};
    /// Bedrock: the region; Vertex: the project and location (each replaces
    /// the request's; empty: the platform's variables).
    std::string region{}, project{}, location{};
    /// `weighted`: its share of first choices, from 0 to 1e9. 0: never
    /// chosen first, only failed over to (a fallback).
    double weight = 1;
    /// Requests and tokens per minute it may take (minute windows aligned to
    /// the clock's); unset: only what the provider's headers report.
    std::optional<std::int64_t> rpm{}, tpm{};
    /// Calls in flight on it at once; unset: no limit.
    std::optional<std::int64_t> max_concurrency{};
};

enum class RouteStrategy {
    weighted,    ///< at random, in proportion to the weights (the default)
    least_busy,  ///< the fewest calls in flight
    latency,     ///< the lowest recent time to first content; the others now and then
};

struct RouterConfig {
    std::vector<Deployment> deployments;
    RouteStrategy strategy = RouteStrategy::weighted;
    /// "" (each process keeps its own counts), or
    /// "redis://[USER:PASSWORD@]HOST:PORT[/DB]" (AUTH sent; the password
    /// printed as *** wherever the URL is): the per-minute counters, the
    /// cooldowns and the failure counts live in Redis, shared by every
    /// process that names it.
    std::string shared_state;
    /// How long a call waits for a budget, a cooldown or a slot to come back
    /// before it fails `saturated`.
    std::chrono::milliseconds queue_timeout{30'000};
    /// The longest any one Redis command may take; past it (or with Redis
    /// unreachable) the process falls back to its local state, and says so once.
    std::chrono::milliseconds shared_state_timeout{50};
    /// Told of every call this router runs (a call's own observer wins);
    /// nullptr: set_default_observer()'s. docs/telemetry.md.
    std::shared_ptr<Observer> observer;
    /// Tests: the router's clock (cooldowns, windows, resets); empty: the system clock.
    std::function<std::chrono::system_clock::time_point()> now;
};

/// "weighted", "least_busy", "latency"; nullopt for anything else.
std::optional<RouteStrategy> route_strategy_from_name(std::string_view name);

/// The router file of `nouscli chat --deployments` (docs/router.md):
/// {"strategy","shared_state"?,"queue_timeout_ms"?,"deployments":[{"name",
/// "provider","base_url","model","api_key_env"?,"weight"?,"rpm"?,"tpm"?,
/// "max_concurrency"?}]}. Each key is read from its variable (default: the
/// provider's, OPENAI_API_KEY...); an unset one is invalid_argument naming
/// the deployment.
Result<RouterConfig> router_config_from_json(std::string_view json);

/// One deployment a call tried, and why it moved on (empty when it answered).
struct RouteAttempt {
    std::string deployment;
    std::string reason;
};

/// What a routed call did: the deployment that answered ("" when none did),
/// and every attempt in order.
struct RouteReport {
    std::string deployment;
    std::vector<RouteAttempt> attempts;
};

class Router {
  public:
    /// invalid_argument for a config it cannot run: no deployment, a name
    /// missing or repeated, a model missing, a weight outside 0 to 1e9 (NaN
    /// too), a limit below 1, a shared_state that is not a redis:// URL.
    static Result<std::unique_ptr<Router>> create(RouterConfig config);
    ~Router();
    Router(const Router&) = delete;
    Router& operator=(const Router&) = delete;

    /// Runs `request` (its provider, base URL, key and model replaced by the
    /// chosen deployment's) as run_chat does. Attempts make no retries of
    /// their own: failover is the retry. A failure after content reached
    /// `on_delta` is returned as it is. When every deployment failed, the
    /// error is the last failure's, its message naming each deployment and
    /// its reason; when none could take the call within queue_timeout, it is
    /// `saturated`, naming each one's budget or cooldown. Thread-safe.
    /// The request is copied once per call (an attempt then sets its
    /// deployment's fields on that copy), not once per attempt.
    Result<ChatResult> chat(const ChatRequest& request, const nous::http::Options& options = {},
                            const std::function<bool(const Delta&)>& on_delta = {},
                            RouteReport* report = nullptr);
    /// The same, on a request the caller gives up (a temporary, or
    /// std::move(request)): no copy of the conversation at all.
    Result<ChatResult> chat(ChatRequest&& request, const nous::http::Options& options = {},
                            const std::function<bool(const Delta&)>& on_delta = {},
                            RouteReport* report = nullptr);

  private:
    friend struct detail::RouterAccess;
    struct Impl;
    explicit Router(std::unique_ptr<Impl> impl);
    /// `working` is the call's own request: each attempt sets its
    /// deployment's fields on it.
    Result<ChatResult> route(ChatRequest& working, const nous::http::Options& options,
                             const std::function<bool(const Delta&)>& on_delta, RouteReport* report,
                             detail::CallObservation* observation, bool& started);
    std::unique_ptr<Impl> impl_;
};

}  // namespace nous::llm
