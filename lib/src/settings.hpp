#pragma once
// Effective settings of one call: per-call options over the app config over defaults.

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

Settings effective_settings(const Options& options);

/// Deadlines of one attempt starting now.
Deadlines deadlines_for(const Options& options, const Settings& settings);

}  // namespace nous::http::detail
