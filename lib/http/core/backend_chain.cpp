// Backend name resolution: per call > environment > app config > default.

#include "core/backend_chain.hpp"

#include "core/log.hpp"

namespace nous::http::detail {

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
        return Error(ErrorCode::invalid_argument,
                     std::string("unknown ") + spec.kind + " '" + per_call + "'");
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

}  // namespace nous::http::detail
