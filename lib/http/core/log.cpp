// The log: sink, level from NOUS_LOG_LEVEL, warn-once, body truncation.

#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "core/limits.hpp"
#include "core/strings.hpp"

namespace nous::http {
namespace {

LogLevel level_from_env() {
    const char* v = std::getenv("NOUS_LOG_LEVEL");
    if (!v) return LogLevel::warning;
    std::string s = detail::to_lower(v);
    if (s == "error") return LogLevel::error;
    if (s == "info") return LogLevel::info;
    if (s == "debug") return LogLevel::debug;
    return LogLevel::warning;
}

std::atomic<int>& level_slot() {
    static std::atomic<int> level{static_cast<int>(level_from_env())};
    return level;
}

struct SinkHolder {
    std::mutex mutex;
    LogSink sink;
};
SinkHolder& sink_holder() {
    static SinkHolder holder;
    return holder;
}

const char* level_name(LogLevel level) {
    switch (level) {
        case LogLevel::error:
            return "error";
        case LogLevel::warning:
            return "warning";
        case LogLevel::info:
            return "info";
        case LogLevel::debug:
            return "debug";
    }
    return "?";
}

}  // namespace

void set_log_sink(LogSink sink) {
    std::lock_guard lock(sink_holder().mutex);
    sink_holder().sink = std::move(sink);
}

void set_log_level(LogLevel level) { level_slot().store(static_cast<int>(level)); }

LogLevel log_level() noexcept { return static_cast<LogLevel>(level_slot().load()); }

namespace detail {

bool log_enabled(LogLevel level) noexcept {
    return static_cast<int>(level) <= level_slot().load(std::memory_order_relaxed);
}

void log(LogLevel level, std::string_view message) {
    if (!log_enabled(level)) return;
    auto& holder = sink_holder();
    std::lock_guard lock(holder.mutex);
    if (holder.sink) {
        holder.sink(level, message);
    } else {
        std::fprintf(stderr, "nous-http %s: %.*s\n", level_name(level),
                     static_cast<int>(message.size()), message.data());
    }
}

void warn_once(const std::string& key, std::string_view message) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    {
        std::lock_guard lock(mutex);
        if (!seen.insert(key).second) return;
    }
    log(LogLevel::warning, message);
}

std::string truncate_for_log(std::string_view body) {
    constexpr std::size_t limit = limits::log_body_bytes;
    if (body.size() <= limit) return std::string(body);
    return std::string(body.substr(0, limit)) + "...[" + std::to_string(body.size() - limit) +
           " more bytes]";
}

}  // namespace detail

void log_message(LogLevel level, std::string_view message) { detail::log(level, message); }

}  // namespace nous::http
