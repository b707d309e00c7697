// post(): validation, backend resolution, the one prepared call, the retry
// runner, logging.

#include <algorithm>

#include "core/config.hpp"
#include "core/headers.hpp"
#include "core/log.hpp"
#include "core/retry.hpp"
#include "core/url.hpp"
#include "post/backends.hpp"

namespace nous::http {

Result<Response> post(std::string_view url, std::string_view body, const Headers& headers,
                      const Options& options) {
    return request("POST", url, body, headers, options);
}

Result<Response> request(std::string_view method, std::string_view url, std::string_view body,
                         const Headers& headers, const Options& options) {
    using namespace detail;
    const bool token = !method.empty() && std::all_of(method.begin(), method.end(),
                                                      [](char c) { return c >= 'A' && c <= 'Z'; });
    if (!token)
        return Error(
            ErrorCode::invalid_argument,
            "a method is upper-case letters (GET, PUT, POST), not '" + std::string(method) + "'");
    if (method == "GET" && !body.empty())
        return Error(ErrorCode::invalid_argument, "a GET request sends no body");
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
    // One pipeline for every backend, an application's own included (adapted
    // in post/custom_backend.cpp): prepare once, then attempts under the retry policy.
    auto call = backend.value()->prepare(std::move(valid.value()), headers, options, env, *config);
    if (!call) return call.error();

    call->method = std::string(method);
    const Request request{url, body, &headers, method};
    std::optional<Response> response;
    RetryRun run;
    run.max_retries = call->settings.max_retries;
    run.total_timeout = options.total_timeout;
    run.hooks = options.test_hooks;
    run.cancel = options.cancel;
    const std::string what(method);
    run.what = what.c_str();
    std::optional<Error> error = run_with_retries(
        [&](Clock::time_point total_by) -> std::optional<Error> {
            Headers attempt_headers;
            Request attempt = request;
            if (options.before_each_attempt) {
                attempt_headers = headers;
                options.before_each_attempt(method, url, body, attempt_headers);
                attempt.headers = &attempt_headers;
            }
            Result<Response> result =
                backend.value()->post_prepared(call.value(), attempt, total_by);
            if (!result.ok()) return std::move(result.error());
            response.emplace(std::move(result.value()));
            return std::nullopt;
        },
        run);
    if (!error) return std::move(*response);
    if (log_enabled(LogLevel::warning)) {
        std::string line = std::string(to_string(error->code)) + " " + what + " " +
                           url_for_log(url) + ": " + error->message;
        // The request id is for the provider's support: not a secret, and the
        // one header value a log line carries.
        if (!error->request_id.empty()) line += " (request id " + error->request_id + ")";
        if (error->quota_exhausted) line += " (quota exhausted: not retried)";
        if (error->code == ErrorCode::http_status)
            line += " body: " + truncate_for_log(error->body);
        log(LogLevel::warning, line);
    }
    return std::move(*error);
}

Response post_or_throw(std::string_view url, std::string_view body, const Headers& headers,
                       const Options& options) {
    return std::move(post(url, body, headers, options)).value();
}

}  // namespace nous::http
