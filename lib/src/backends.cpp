#include "backends.hpp"

#include <Poco/Base64Encoder.h>

#include <sstream>

#include "internal.hpp"
#include "named_registry.hpp"

namespace nous::http {

namespace {

detail::NamedRegistry<Backend>& registry() {
    static auto* r = [] {
        auto* made = new detail::NamedRegistry<Backend>;  // never destroyed: used until exit
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
    return detail::ChainSpec{"backend", "NOUS_HTTP_BACKEND", env.http_backend, "pooled", config.backend,
                             available, known_not_built};
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) { registry().add(name, std::move(factory)); }

std::vector<std::string> backend_names() { return registry().names(); }

Result<std::string> resolve_backend_name(const Options& options) {
    auto env = detail::read_env();
    return detail::resolve_chain(post_chain(env, *detail::config_snapshot(env)), options.backend);
}

namespace detail {

Result<Response> PreparedBackend::post(const Request& request, const Options& options) {
    auto url = parse_url(request.url);
    if (!url) return url.error();
    const EnvSnapshot env = read_env();
    const Settings settings = effective_settings(options, *config_snapshot(env));
    return post_prepared(CallContext{url.value(), env, settings}, request, options);
}

std::string basic_auth(const std::string& userinfo) {
    std::ostringstream out;
    Poco::Base64Encoder encoder(out);
    encoder.rdbuf()->setLineLength(0);
    encoder << userinfo;
    encoder.close();
    return "Basic " + out.str();
}

Result<std::string> resolve_chain(const ChainSpec& spec, const std::string& per_call) {
    auto not_built = [&](const std::string& name, const char* where) {
        warn_once(std::string(spec.kind) + ":not-built:" + name,
                  std::string(spec.kind) + " '" + name + "' (" + where +
                      ") is not compiled into this build (rebuild with -DNOUS_WITH_CURL=ON and "
                      "libcurl4-openssl-dev installed); falling back");
    };
    // Where a not-built backend falls back to: app config, then the default.
    auto fallback = [&](const std::string& skip) -> std::string {
        if (spec.config_name && *spec.config_name != skip && spec.available(*spec.config_name))
            return *spec.config_name;
        return spec.default_name;
    };
    if (!per_call.empty()) {
        if (spec.available(per_call)) return per_call;
        if (spec.known_not_built(per_call)) {
            not_built(per_call, "per call");
            return fallback(per_call);
        }
        return Error(ErrorCode::invalid_argument, std::string("unknown ") + spec.kind + " '" + per_call + "'");
    }
    if (spec.env_value) {
        std::string name = spec.env_value;
        if (spec.available(name)) return name;
        if (spec.known_not_built(name)) {
            not_built(name, spec.env_var);
            return fallback(name);
        }
        warn_once(std::string(spec.kind) + ":unknown-env:" + name,
                  std::string(spec.env_var) + "=" + name + " names no " + spec.kind + "; ignored");
    }
    if (spec.config_name && !spec.config_name->empty()) {
        const std::string& name = *spec.config_name;
        if (spec.available(name)) return name;
        if (spec.known_not_built(name))
            not_built(name, "app config");
        else
            warn_once(std::string(spec.kind) + ":unknown-config:" + name,
                      "app config names no " + std::string(spec.kind) + " '" + name + "'; ignored");
    }
    return std::string(spec.default_name);
}

Result<std::shared_ptr<Backend>> backend_for(const Options& options, const EnvSnapshot& env, const Config& config) {
    // The common case: nothing names a backend.
    if (options.backend.empty() && !env.http_backend && !config.backend) {
        static const auto pooled = registry().get("pooled", "backend");  // the registry's own instance
        return pooled;
    }
    auto name = resolve_chain(post_chain(env, config), options.backend);
    if (!name) return name.error();
    return registry().get(name.value(), "backend");
}

}  // namespace detail
}  // namespace nous::http
