// App config: configure() in code, and a JSON file named by NOUS_HTTP_CONFIG.

#include "core/config.hpp"

#include <rapidjson/document.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/json_limits.hpp"
#include "core/log.hpp"

namespace nous::http {

namespace {

struct ConfigState {
    std::mutex mutex;
    Config programmatic;
    std::map<std::string, Config> files;   ///< parsed file per path (read once)
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

namespace {

// One reader per field type; a value of the wrong type or out of range is ignored.
void read_value(const rapidjson::Value& v, std::optional<std::string>& out) {
    if (v.IsString()) out = v.GetString();
}
void read_value(const rapidjson::Value& v, std::optional<Milliseconds>& out) {
    // Durations past ~115 days would overflow deadline arithmetic.
    constexpr std::uint64_t max_ms = 10'000'000'000ull;
    if (v.IsUint64() && v.GetUint64() <= max_ms)
        out = Milliseconds(static_cast<long long>(v.GetUint64()));
}
void read_value(const rapidjson::Value& v, std::optional<std::size_t>& out) {
    if (v.IsUint64()) out = static_cast<std::size_t>(v.GetUint64());
}
void read_value(const rapidjson::Value& v, std::optional<int>& out) {
    // max_retries: a count a config file may sensibly hold.
    if (v.IsInt() && v.GetInt() >= 0 && v.GetInt() <= 100) out = v.GetInt();
}

}  // namespace

std::optional<Config> parse_config_text(std::string_view text, std::string* error) {
    Config c;
    rapidjson::Document doc;
    std::string why;
    if (!parse_json_limited(doc, text, &why) || !doc.IsObject()) {
        if (error) *error = "not a JSON object" + (why.empty() ? std::string() : " (" + why + ")");
        return std::nullopt;
    }
    for_each_config_field([&](const char* key, auto member) {
        auto m = doc.FindMember(key);
        if (m != doc.MemberEnd()) read_value(m->value, c.*member);
    });
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
        if (it == s.files.end())
            it = s.files.emplace(std::string(path), parse_config_file(std::string(path))).first;
        result = it->second;
    }
    const Config& code = s.programmatic;
    for_each_config_field([&](const char*, auto member) { merge(result.*member, code.*member); });
    s.merged = std::make_shared<const Config>(std::move(result));
    s.merged_for_path = std::string(path);
    return s.merged;
}

Settings effective_settings(const Options& options, const Config& config) {
    Settings s;
    s.connect_timeout = options.connect_timeout.value_or(
        config.connect_timeout.value_or(defaults::connect_timeout));
    s.read_timeout =
        options.read_timeout.value_or(config.read_timeout.value_or(defaults::read_timeout));
    s.max_retries =
        options.max_retries.value_or(config.max_retries.value_or(defaults::max_retries));
    s.max_response_bytes = options.max_response_bytes.value_or(defaults::max_response_bytes);
    s.pool.max_connections = config.pool_max_per_origin.value_or(defaults::pool_max_per_origin);
    s.pool.max_idle = config.pool_max_idle_per_origin.value_or(defaults::pool_max_idle_per_origin);
    s.pool.idle_timeout = config.pool_idle_timeout.value_or(defaults::pool_idle_timeout);
    s.window_high_bytes = options.window_high_bytes.value_or(
        config.window_high_bytes.value_or(defaults::window_high_bytes));
    s.window_low_bytes = options.window_low_bytes.value_or(
        config.window_low_bytes.value_or(defaults::window_low_bytes));
    s.window_max_park = options.window_max_park.value_or(
        config.window_max_park.value_or(defaults::window_max_park));
    s.max_event_bytes = options.max_event_bytes.value_or(defaults::max_event_bytes);
    s.max_concurrent_streams =
        config.max_concurrent_streams.value_or(defaults::max_concurrent_streams);
    s.first_event_timeout =
        options.first_event_timeout ? options.first_event_timeout : config.first_event_timeout;
    s.event_idle_timeout =
        options.event_idle_timeout ? options.event_idle_timeout : config.event_idle_timeout;
    return s;
}

Deadlines deadlines_for(const Settings& settings, Clock::time_point total_by) {
    Deadlines d;
    d.connect_by = saturating_add(Clock::now(), settings.connect_timeout);
    d.total_by = total_by;
    d.idle = settings.read_timeout;
    return d;
}

}  // namespace detail
}  // namespace nous::http
