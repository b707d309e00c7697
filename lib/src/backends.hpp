#pragma once
// The backend registry and the resolution chain.

#include <memory>
#include <string>

#include "env.hpp"
#include "nous/http/client.hpp"
#include "settings.hpp"
#include "url.hpp"

namespace nous::http::detail {

/// What post() already worked out for a call, handed to built-in backends so
/// they do not parse the URL, read the environment or merge the config again.
struct CallContext {
    const Url& url;
    const EnvSnapshot& env;
    const Settings& settings;
};

/// A built-in backend that accepts the prepared call context.
class PreparedBackend : public Backend {
public:
    /// Called directly (not through post()): parse, read the environment, merge settings.
    Result<Response> post(const Request& request, const Options& options) override;
    virtual Result<Response> post_prepared(const CallContext& context, const Request& request,
                                           const Options& options) = 0;
};

std::shared_ptr<Backend> make_pooled_backend();
#ifdef NOUS_HAVE_CURL
std::shared_ptr<Backend> make_curl_backend();
#endif

/// The backend the chain selects for `options` (per call > NOUS_HTTP_BACKEND >
/// app config > "pooled").
Result<std::shared_ptr<Backend>> backend_for(const Options& options, const EnvSnapshot& env, const Config& config);

/// "Basic base64(userinfo)".
std::string basic_auth(const std::string& userinfo);

/// Resolution chain shared by post and stream backends.
struct ChainSpec {
    const char* kind;             ///< "backend" or "stream backend", for messages
    const char* env_var;          ///< NOUS_HTTP_BACKEND / NOUS_HTTP_STREAM_BACKEND (for messages)
    const char* env_value;        ///< its value, or null
    const char* default_name;     ///< "pooled" / "window"
    std::optional<std::string> config_name;
    /// Whether `name` is registered/built-in and compiled in.
    bool (*available)(const std::string&);
    /// Whether `name` is a known built-in that this build does not include.
    bool (*known_not_built)(const std::string&);
};
Result<std::string> resolve_chain(const ChainSpec& spec, const std::string& per_call);

}  // namespace nous::http::detail
