#pragma once
// The library's own logging calls (the sink and level are public: nous/http/log.hpp).
// Nothing logged may hold a header value or a URL query; bodies are cut to 500 bytes.

#include <string>
#include <string_view>

#include "nous/http/log.hpp"

namespace nous::http::detail {

bool log_enabled(LogLevel level) noexcept;
void log(LogLevel level, std::string_view message);
/// Logs `message` at warning level only the first time `key` is seen in this process.
void warn_once(const std::string& key, std::string_view message);
/// At most limits::log_body_bytes (500) of a body, for logs.
std::string truncate_for_log(std::string_view body);

}  // namespace nous::http::detail
