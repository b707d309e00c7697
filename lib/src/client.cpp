// post(): validation, backend resolution, retries, logging.

#include "backends.hpp"
#include "headers.hpp"
#include "internal.hpp"
#include "retry.hpp"
#include "settings.hpp"
#include "sigpipe.hpp"
#include "url.hpp"

namespace nous::http {

Result<Response> post(std::string_view url, std::string_view body, const Headers& headers, const Options& options) {
    using namespace detail;
    auto parsed = parse_url(url);
    std::optional<Error> invalid = parsed ? validate_request_headers(body, headers) : parsed.error();
    if (invalid) {
        log(LogLevel::warning, "post refused: " + invalid->message + " headers=" + header_names_for_log(headers));
        return *invalid;
    }
    const EnvSnapshot env = read_env();
    const auto config = config_snapshot(env);
    auto backend = backend_for(options, env, *config);
    if (!backend) return backend.error();
    std::optional<SigpipeGuard> guard;
    if (parsed->https) guard.emplace();

    const Settings settings = effective_settings(options, *config);
    const Request request{url, body, &headers};
    const CallContext context{parsed.value(), env, settings};
    auto* prepared = dynamic_cast<PreparedBackend*>(backend.value().get());
    auto result = run_with_retries(
        [&](const Options& o) {
            return prepared ? prepared->post_prepared(context, request, o) : backend.value()->post(request, o);
        },
        options, settings.max_retries);
    if (!result.ok() && log_enabled(LogLevel::warning)) {
        const Error& e = result.error();
        std::string line = std::string(to_string(e.code)) + " POST " + url_for_log(url) + ": " + e.message;
        if (e.code == ErrorCode::http_status) line += " body: " + truncate_for_log(e.body);
        log(LogLevel::warning, line);
    }
    return result;
}

Response post_or_throw(std::string_view url, std::string_view body, const Headers& headers, const Options& options) {
    return std::move(post(url, body, headers, options)).value();
}

}  // namespace nous::http
