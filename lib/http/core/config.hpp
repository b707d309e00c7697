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

/// Every merged setting of one call (Options over Config over defaults::),
/// computed once by effective_settings: code that needs a setting reads it
/// here, never merges it again.
struct Settings {
    Milliseconds connect_timeout{defaults::connect_timeout};
    Milliseconds read_timeout{defaults::read_timeout};
    int max_retries = defaults::max_retries;
    std::size_t max_response_bytes = defaults::max_response_bytes;
    /// Not settable: error bodies are kept for diagnosis, never unbounded.
    std::size_t max_error_body_bytes = defaults::max_error_body_bytes;
    PoolSettings pool;
    // Streams.
    std::size_t window_high_bytes = defaults::window_high_bytes;
    std::size_t window_low_bytes = defaults::window_low_bytes;
    Milliseconds window_max_park{defaults::window_max_park};
    std::size_t max_event_bytes = defaults::max_event_bytes;
    std::size_t max_concurrent_streams = defaults::max_concurrent_streams;
    std::optional<Milliseconds> first_event_timeout;  ///< unset: none
    std::optional<Milliseconds> event_idle_timeout;   ///< unset: none
};

/// The one list of Config's fields with their NOUS_HTTP_CONFIG key: the
/// file's parse and the merge of configure() over the file both walk it, and
/// a test checks each key against docs/configuration.md. A new Config field
/// is added here and nowhere else in the parse and merge.
template <typename Visit>
void for_each_config_field(Visit&& visit) {
    visit("backend", &Config::backend);
    visit("stream_backend", &Config::stream_backend);
    visit("connect_timeout_ms", &Config::connect_timeout);
    visit("read_timeout_ms", &Config::read_timeout);
    visit("max_retries", &Config::max_retries);
    visit("pool_max_per_origin", &Config::pool_max_per_origin);
    visit("pool_max_idle_per_origin", &Config::pool_max_idle_per_origin);
    visit("pool_idle_timeout_ms", &Config::pool_idle_timeout);
    visit("window_high_bytes", &Config::window_high_bytes);
    visit("window_low_bytes", &Config::window_low_bytes);
    visit("window_max_park_ms", &Config::window_max_park);
    visit("max_concurrent_streams", &Config::max_concurrent_streams);
    visit("first_event_timeout_ms", &Config::first_event_timeout);
    visit("event_idle_timeout_ms", &Config::event_idle_timeout);
}

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
