// post(): validation, backend resolution, retries, logging.

#include <csignal>
#include <ctime>

#include "backends.hpp"
#include "headers.hpp"
#include "internal.hpp"
#include "retry.hpp"
#include "settings.hpp"
#include "url.hpp"

namespace nous::http {

namespace detail {
namespace {

/// POCO and OpenSSL write without MSG_NOSIGNAL (poco-1.11.md, "Signals and
/// proxies"): on the caller's thread, block SIGPIPE around TLS I/O, consume a
/// pending one, and restore the caller's mask.
class SigpipeGuard {
public:
    SigpipeGuard() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
        was_blocked_ = sigismember(&old_, SIGPIPE) == 1;
    }
    ~SigpipeGuard() {
        if (was_blocked_) return;
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE) == 1) {
            timespec zero{0, 0};
            sigtimedwait(&pipe_, nullptr, &zero);
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;

private:
    sigset_t pipe_{}, old_{};
    bool was_blocked_ = false;
};

std::optional<Error> validate_request(std::string_view body, const Headers& headers) {
    if (auto e = validate_headers(headers)) return e;
    for (const auto& [name, value] : headers) {
        if (header_name_equals(name, "transfer-encoding"))
            return Error(ErrorCode::invalid_argument, "Transfer-Encoding is set by the library, not the caller");
        if (header_name_equals(name, "content-length") && trim(value) != std::to_string(body.size()))
            return Error(ErrorCode::invalid_argument,
                         "Content-Length header disagrees with the body size (" + std::to_string(body.size()) + ")");
    }
    return std::nullopt;
}

}  // namespace
}  // namespace detail

Result<Response> post(std::string_view url, std::string_view body, const Headers& headers, const Options& options) {
    using namespace detail;
    auto parsed = parse_url(url);
    std::optional<Error> invalid = parsed ? validate_request(body, headers) : parsed.error();
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
