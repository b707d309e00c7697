#pragma once
// Pluggable logging. The log never holds a header value or a URL query, and
// bodies are truncated to 500 bytes.

#include <functional>
#include <string_view>

namespace nous::http {

enum class LogLevel { error = 0, warning = 1, info = 2, debug = 3 };

using LogSink = std::function<void(LogLevel, std::string_view message)>;

/// Replace the sink (default: stderr). Thread-safe; pass nullptr for the default.
void set_log_sink(LogSink sink);
/// Override the level (default: NOUS_LOG_LEVEL, else warning). Thread-safe.
void set_log_level(LogLevel level);
LogLevel log_level() noexcept;
/// `message` to the sink, when `level` passes the level: for the layers built
/// on nous_http (nous_llm's router), which log through the same sink.
void log_message(LogLevel level, std::string_view message);

}  // namespace nous::http
