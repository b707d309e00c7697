// App config: configure() in code, and a JSON file named by NOUS_HTTP_CONFIG.

#include <rapidjson/document.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/config.hpp"
#include "core/json_limits.hpp"
#include "core/log.hpp"

namespace nous::http {

namespace {

struct ConfigState {
    std::mutex mutex;
    Config programmatic;
    std::map<std::string, Config> files;  ///< parsed file per path (read once)
    std::shared_ptr<const Config> merged;  ///< for merged_for_path
    std::string merged_for_path;
};
ConfigState& state() {
    static ConfigState s;
    return s;
}

Config parse_config_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        detail::log(LogLevel::error, "NOUS_HTTP_CONFIG: cannot read " + path + "; ignored");
        return Config{};
    }
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto parsed = detail::parse_config_text(text.str(), &error);
    if (!parsed) {
        detail::log(LogLevel::error, "NOUS_HTTP_CONFIG: " + path + ": " + error + "; ignored");
        return Config{};
    }
    return *parsed;
}

}  // namespace

namespace detail {

std::optional<Config> parse_config_text(std::string_view text, std::string* error) {
    Config c;
    rapidjson::Document doc;
    std::string why;
    if (!parse_json_limited(doc, text, &why) || !doc.IsObject()) {
        if (error) *error = "not a JSON object" + (why.empty() ? std::string() : " (" + why + ")");
        return std::nullopt;
    }
    auto str = [&](const char* key, std::optional<std::string>& out) {
        if (auto m = doc.FindMember(key); m != doc.MemberEnd() && m->value.IsString()) out = m->value.GetString();
    };
    // Durations past ~115 days would overflow deadline arithmetic: ignored.
    constexpr std::uint64_t max_ms = 10'000'000'000ull;
    auto ms = [&](const char* key, std::optional<Milliseconds>& out) {
        if (auto m = doc.FindMember(key); m != doc.MemberEnd() && m->value.IsUint64() && m->value.GetUint64() <= max_ms)
            out = Milliseconds(static_cast<long long>(m->value.GetUint64()));
    };
    str("backend", c.backend);
    str("stream_backend", c.stream_backend);
    ms("connect_timeout_ms", c.connect_timeout);
    ms("read_timeout_ms", c.read_timeout);
    ms("pool_idle_timeout_ms", c.pool_idle_timeout);
    ms("window_max_park_ms", c.window_max_park);
    auto size = [&](const char* key, std::optional<std::size_t>& out) {
        if (auto m = doc.FindMember(key); m != doc.MemberEnd() && m->value.IsUint64())
            out = static_cast<std::size_t>(m->value.GetUint64());
    };
    size("window_high_bytes", c.window_high_bytes);
    size("window_low_bytes", c.window_low_bytes);
    size("max_concurrent_streams", c.max_concurrent_streams);
    if (auto m = doc.FindMember("max_retries"); m != doc.MemberEnd() && m->value.IsInt() && m->value.GetInt() >= 0 &&
                                                  m->value.GetInt() <= 100)
        c.max_retries = m->value.GetInt();
    size("pool_max_per_origin", c.pool_max_per_origin);
    size("pool_max_idle_per_origin", c.pool_max_idle_per_origin);
    return c;
}

}  // namespace detail

namespace {

template <typename T>
void merge(std::optional<T>& into, const std::optional<T>& over) {
    if (over) into = over;
}

}  // namespace

void configure(const Config& config) {
    std::lock_guard lock(state().mutex);
    state().programmatic = config;
    state().merged.reset();
}

Config current_config() { return *detail::config_snapshot(detail::read_env()); }

namespace detail {

std::shared_ptr<const Config> config_snapshot(const EnvSnapshot& env) {
    auto& s = state();
    std::string_view path = env.http_config ? env.http_config : "";
    std::lock_guard lock(s.mutex);
    if (s.merged && s.merged_for_path == path) return s.merged;
    Config result;
    if (!path.empty()) {
        auto it = s.files.find(std::string(path));
        if (it == s.files.end()) it = s.files.emplace(std::string(path), parse_config_file(std::string(path))).first;
        result = it->second;
    }
    const Config& code = s.programmatic;
    merge(result.backend, code.backend);
    merge(result.stream_backend, code.stream_backend);
    merge(result.connect_timeout, code.connect_timeout);
    merge(result.read_timeout, code.read_timeout);
    merge(result.max_retries, code.max_retries);
    merge(result.pool_max_per_origin, code.pool_max_per_origin);
    merge(result.pool_max_idle_per_origin, code.pool_max_idle_per_origin);
    merge(result.pool_idle_timeout, code.pool_idle_timeout);
    merge(result.window_high_bytes, code.window_high_bytes);
    merge(result.window_low_bytes, code.window_low_bytes);
    merge(result.window_max_park, code.window_max_park);
    merge(result.max_concurrent_streams, code.max_concurrent_streams);
    s.merged = std::make_shared<const Config>(std::move(result));
    s.merged_for_path = std::string(path);
    return s.merged;
}

Settings effective_settings(const Options& options, const Config& config) {
    Settings s;
    s.connect_timeout = options.connect_timeout.value_or(config.connect_timeout.value_or(defaults::connect_timeout));
    s.read_timeout = options.read_timeout.value_or(config.read_timeout.value_or(defaults::read_timeout));
    s.max_retries = options.max_retries.value_or(config.max_retries.value_or(defaults::max_retries));
    s.max_response_bytes = options.max_response_bytes.value_or(defaults::max_response_bytes);
    s.pool.max_connections = config.pool_max_per_origin.value_or(defaults::pool_max_per_origin);
    s.pool.max_idle = config.pool_max_idle_per_origin.value_or(defaults::pool_max_idle_per_origin);
    s.pool.idle_timeout = config.pool_idle_timeout.value_or(defaults::pool_idle_timeout);
    return s;
}

Deadlines deadlines_for(const Settings& settings, Clock::time_point total_by) {
    Deadlines d;
    d.connect_by = Clock::now() + settings.connect_timeout;
    d.total_by = total_by;
    d.idle = settings.read_timeout;
    return d;
}

}  // namespace detail
}  // namespace nous::http
