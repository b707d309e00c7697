#pragma once
// The app config (configure() over the NOUS_HTTP_CONFIG file) and the
// effective settings of one call: per-call options over the config over defaults.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/deadline.hpp"
#include "core/env.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

/// Limits of one origin's connection pool.
struct PoolSettings {
    std::size_t max_connections = defaults::pool_max_per_origin;
    std::size_t max_idle = defaults::pool_max_idle_per_origin;
    Milliseconds idle_timeout = defaults::pool_idle_timeout;
};

struct Settings {
    Milliseconds connect_timeout{defaults::connect_timeout};
    Milliseconds read_timeout{defaults::read_timeout};
    int max_retries = defaults::max_retries;
    std::size_t max_response_bytes = defaults::max_response_bytes;
    PoolSettings pool;
};

/// The keys of a NOUS_HTTP_CONFIG file (docs/configuration.md); nullopt with
/// `error` set when the text is not a JSON object (or nests too deep).
/// Unknown keys and values of the wrong type are ignored.
std::optional<Config> parse_config_text(std::string_view text, std::string* error = nullptr);

/// The app config in force (programmatic over the NOUS_HTTP_CONFIG file):
/// shared and immutable, rebuilt only when configure() runs or the file name changes.
std::shared_ptr<const Config> config_snapshot(const EnvSnapshot& env);

Settings effective_settings(const Options& options, const Config& config);

/// Deadlines of one attempt starting now, under the call's total deadline.
Deadlines deadlines_for(const Settings& settings, Clock::time_point total_by);

}  // namespace nous::http::detail
