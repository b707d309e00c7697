#pragma once
// The backend registry and the resolution chain.

#include <memory>
#include <string>

#include "nous/http/client.hpp"

namespace nous::http::detail {

std::shared_ptr<Backend> make_pooled_backend();

/// The backend the chain selects for `options` (per call > NOUS_HTTP_BACKEND >
/// app config > "pooled").
Result<std::shared_ptr<Backend>> backend_for(const Options& options);

/// "Basic base64(userinfo)".
std::string basic_auth(const std::string& userinfo);

/// Resolution chain shared by post and stream backends.
struct ChainSpec {
    const char* kind;             ///< "backend" or "stream backend", for messages
    const char* env_var;          ///< NOUS_HTTP_BACKEND / NOUS_HTTP_STREAM_BACKEND
    const char* default_name;     ///< "pooled" / "window"
    std::optional<std::string> config_name;
    /// Whether `name` is registered/built-in and compiled in.
    std::function<bool(const std::string&)> available;
    /// Whether `name` is a known built-in that this build does not include.
    std::function<bool(const std::string&)> known_not_built;
};
Result<std::string> resolve_chain(const ChainSpec& spec, const std::string& per_call);

}  // namespace nous::http::detail
