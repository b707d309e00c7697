#pragma once
// Effective settings of one call: per-call options over the app config over defaults.

#include <memory>

#include "env.hpp"
#include "internal.hpp"
#include "nous/http/options.hpp"
#include "pool.hpp"

namespace nous::http::detail {

struct Settings {
    Milliseconds connect_timeout{defaults::connect_timeout};
    Milliseconds read_timeout{defaults::read_timeout};
    int max_retries = defaults::max_retries;
    std::size_t max_response_bytes = defaults::max_response_bytes;
    PoolSettings pool;
};

/// The app config in force (programmatic over the NOUS_HTTP_CONFIG file):
/// shared and immutable, rebuilt only when configure() runs or the file name changes.
std::shared_ptr<const Config> config_snapshot(const EnvSnapshot& env);

Settings effective_settings(const Options& options, const Config& config);

/// Deadlines of one attempt starting now.
Deadlines deadlines_for(const Options& options, const Settings& settings);

}  // namespace nous::http::detail
