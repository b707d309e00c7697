#pragma once
// The post backends: the registry, the resolution chain, and the built-in
// backends that run on a prepared call.

#include <memory>

#include "core/env.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "transport/call.hpp"

namespace nous::http::detail {

/// What post() runs: one attempt of a call it prepared (validated, proxy
/// chosen, settings merged, the library's headers added); post() runs the
/// retries. The built-in backends are these; a registered one is adapted.
class PreparedBackend : public Backend {
  public:
    /// Called directly (not through post()): prepare, then one attempt.
    Result<Response> post(const Request& request, const Options& options) override;
    virtual Result<Response> post_prepared(const PreparedCall& call, const Request& request,
                                           Clock::time_point total_by) = 0;
    /// Whether the backend's transport resends a whole request by itself after
    /// a reused connection fails (libcurl does): then every call carries an
    /// Idempotency-Key, whatever Options::idempotency_key says.
    virtual bool resends_whole_requests() const noexcept { return false; }
    /// prepare_call for this backend.
    Result<PreparedCall> prepare(Url url, const Headers& headers, const Options& options,
                                 const EnvSnapshot& env, const Config& config) const;
};

std::shared_ptr<PreparedBackend> make_pooled_backend();
#ifdef NOUS_HAVE_CURL
std::shared_ptr<PreparedBackend> make_curl_backend();
#endif
/// An application's backend (register_backend) as one of ours: the same
/// pipeline (post/custom_backend.cpp).
std::shared_ptr<PreparedBackend> adapt_custom_backend(std::shared_ptr<Backend> backend);

/// The backend the chain selects for `options` (per call > NOUS_HTTP_BACKEND >
/// app config > "pooled").
Result<std::shared_ptr<PreparedBackend>> backend_for(const Options& options, const EnvSnapshot& env,
                                                     const Config& config);

}  // namespace nous::http::detail
