#pragma once
// The resolution chain shared by post and stream backends:
// per call > environment variable > app config > default.

#include <optional>
#include <string>

#include "nous/http/result.hpp"

namespace nous::http::detail {

struct ChainSpec {
    const char* kind;          ///< "backend" or "stream backend", for messages
    const char* env_var;       ///< NOUS_HTTP_BACKEND / NOUS_HTTP_STREAM_BACKEND (for messages)
    const char* env_value;     ///< its value, or null
    const char* default_name;  ///< "pooled" / "window"
    std::optional<std::string> config_name;
    /// Whether `name` is registered/built-in and compiled in.
    bool (*available)(const std::string&);
    /// Whether `name` is a known built-in that this build does not include.
    bool (*known_not_built)(const std::string&);
};

/// An unknown name per call is invalid_argument; from the environment or the
/// config it warns once and falls through; a built-in that is not compiled in
/// warns once and falls back to the config, then the default.
Result<std::string> resolve_chain(const ChainSpec& spec, const std::string& per_call);

}  // namespace nous::http::detail
