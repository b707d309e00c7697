// The post backend registry and resolution, and the prepared call of a backend.

#include "post/backends.hpp"

#include "core/backend_chain.hpp"
#include "core/config.hpp"
#include "core/registry.hpp"
#include "core/uuid.hpp"

namespace nous::http {

namespace {

detail::NamedRegistry<detail::PreparedBackend>& registry() {
    static auto* r = [] {
        auto* made =
            new detail::NamedRegistry<detail::PreparedBackend>;  // never destroyed: used until exit
        made->add("pooled", [] { return detail::make_pooled_backend(); });
#ifdef NOUS_HAVE_CURL
        made->add("curl", [] { return detail::make_curl_backend(); });
#endif
        return made;
    }();
    return *r;
}

/// Built-in backends this build may lack (curl is optional).
bool known_not_built(const std::string& name) {
#ifdef NOUS_HAVE_CURL
    (void)name;
    return false;
#else
    return name == "curl";
#endif
}

bool available(const std::string& name) { return registry().contains(name); }

detail::ChainSpec post_chain(const detail::EnvSnapshot& env, const Config& config) {
    return detail::ChainSpec{"backend",      "NOUS_HTTP_BACKEND", env.http_backend, "pooled",
                             config.backend, available,           known_not_built};
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
    registry().add(name,
                   [factory = std::move(factory)]() -> std::shared_ptr<detail::PreparedBackend> {
                       return factory ? detail::adapt_custom_backend(factory()) : nullptr;
                   });
}

std::vector<std::string> backend_names() { return registry().names(); }

Result<std::string> resolve_backend_name(const Options& options) {
    auto env = detail::read_env();
    return detail::resolve_chain(post_chain(env, *detail::config_snapshot(env)), options.backend);
}

namespace detail {

Result<PreparedCall> PreparedBackend::prepare(Url url, const Headers& headers,
                                              const Options& options, const EnvSnapshot& env,
                                              const Config& config) const {
    auto call = prepare_call(std::move(url), headers, options, env, config);
    if (call && resends_whole_requests() && !call->has_idempotency_key) {
        call->extra_headers.emplace_back("Idempotency-Key", uuid_v4());
        call->has_idempotency_key = true;
    }
    return call;
}

Result<Response> PreparedBackend::post(const Request& request, const Options& options) {
    const EnvSnapshot env = read_env();
    auto valid = validate_call(request.url, request.body, *request.headers);
    if (!valid) return valid.error();
    auto call =
        prepare(std::move(valid.value()), *request.headers, options, env, *config_snapshot(env));
    if (!call) return call.error();
    const auto total_by = options.total_timeout
                              ? saturating_add(Clock::now(), *options.total_timeout)
                              : Clock::time_point::max();
    return post_prepared(call.value(), request, total_by);
}

Result<std::shared_ptr<PreparedBackend>> backend_for(const Options& options, const EnvSnapshot& env,
                                                     const Config& config) {
    // The common case: nothing names a backend.
    if (options.backend.empty() && !env.http_backend && !config.backend) {
        static const auto pooled =
            registry().get("pooled", "backend");  // the registry's own instance
        return pooled;
    }
    auto name = resolve_chain(post_chain(env, config), options.backend);
    if (!name) return name.error();
    return registry().get(name.value(), "backend");
}

}  // namespace detail
}  // namespace nous::http
