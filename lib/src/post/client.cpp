// post(): validation, backend resolution, the retry runner, logging.

#include "core/config.hpp"
#include "core/headers.hpp"
#include "core/log.hpp"
#include "core/retry.hpp"
#include "core/url.hpp"
#include "post/backends.hpp"
#include "transport/sigpipe.hpp"

namespace nous::http {

Result<Response> post(std::string_view url, std::string_view body, const Headers& headers, const Options& options) {
    using namespace detail;
    // Every backend, custom ones included, sees only calls that passed this.
    auto valid = validate_call(url, body, headers);
    if (!valid) {
        log(LogLevel::warning,
            "post refused: " + valid.error().message + " headers=" + header_names_for_log(headers));
        return valid.error();
    }
    const EnvSnapshot env = read_env();
    const auto config = config_snapshot(env);
    auto backend = backend_for(options, env, *config);
    if (!backend) return backend.error();
    auto* prepared_backend = dynamic_cast<PreparedBackend*>(backend.value().get());
    std::optional<PreparedCall> call;
    if (prepared_backend) {
        auto made = prepared_backend->prepare(std::move(valid.value()), headers, options, env, *config);
        if (!made) return made.error();
        call.emplace(std::move(made.value()));
    }
    // Our own transport never raises SIGPIPE (MSG_NOSIGNAL, and a guard around
    // POCO's handshake); a custom or curl backend's TLS writes might
    // (docs/design/poco-traps.md#sigpipe).
    std::optional<SigpipeGuard> guard;
    if (!prepared_backend && valid.value().https) guard.emplace();

    const Request request{url, body, &headers};
    std::optional<Response> response;
    RetryRun run;
    run.max_retries = call ? call->settings.max_retries : effective_settings(options, *config).max_retries;
    run.total_timeout = options.total_timeout;
    run.hooks = options.test_hooks;
    run.cancel = options.cancel;
    run.what = "POST";
    std::optional<Options> shrunk;  // a custom backend sees what is left of the total deadline
    std::optional<Error> error = run_with_retries(
        [&](Clock::time_point total_by) -> std::optional<Error> {
            Result<Response> result = Error(ErrorCode::backend_unavailable, "no backend");
            if (prepared_backend) {
                result = prepared_backend->post_prepared(*call, request, total_by);
            } else {
                const Options* effective = &options;
                if (total_by != Clock::time_point::max()) {
                    shrunk.emplace(options);
                    shrunk->total_timeout =
                        std::chrono::duration_cast<Milliseconds>(total_by - Clock::now());
                    effective = &*shrunk;
                }
                try {
                    result = backend.value()->post(request, *effective);
                } catch (const std::exception& e) {
                    result = Error(ErrorCode::backend_unavailable, std::string("backend threw: ") + e.what());
                }
            }
            if (!result.ok()) return std::move(result.error());
            response.emplace(std::move(result.value()));
            return std::nullopt;
        },
        run);
    if (!error) return std::move(*response);
    if (log_enabled(LogLevel::warning)) {
        std::string line = std::string(to_string(error->code)) + " POST " + url_for_log(url) + ": " + error->message;
        if (error->code == ErrorCode::http_status) line += " body: " + truncate_for_log(error->body);
        log(LogLevel::warning, line);
    }
    return std::move(*error);
}

Response post_or_throw(std::string_view url, std::string_view body, const Headers& headers, const Options& options) {
    return std::move(post(url, body, headers, options)).value();
}

}  // namespace nous::http
