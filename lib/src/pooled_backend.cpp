// The default `post` backend: keep-alive POCO sessions from a per-origin pool.

#include "backends.hpp"
#include "cancel.hpp"
#include "exchange.hpp"
#include "pool.hpp"
#include "proxy.hpp"
#include "settings.hpp"

namespace nous::http::detail {

namespace {

std::chrono::microseconds micros(Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

class PooledBackend final : public PreparedBackend {
public:
    Result<Response> post_prepared(const CallContext& context, const Request& request,
                                   const Options& options) override {
        const auto start = Clock::now();
        const Url& url = context.url;
        const Settings& settings = context.settings;
        auto proxy = proxy_for(url, context.env);
        if (!proxy) return proxy.error();
        auto pool = pool_for(url, proxy.value(), options, settings.pool);

        ExchangeParams params;
        params.deadlines = deadlines_for(options, settings);
        params.cancel = options.cancel;
        params.max_response_bytes = settings.max_response_bytes;
        if (!proxy.value().empty() && !url.https) {
            auto proxy_url = parse_url(proxy.value());
            if (proxy_url && !proxy_url->userinfo.empty()) params.proxy_authorization = basic_auth(proxy_url->userinfo);
        }

        // Attempt 0 may reuse an idle connection. A reused connection that
        // turns out stale before any response byte is resent once, on a new one.
        for (int attempt = 0;; ++attempt) {
            auto lease = pool->checkout(params.deadlines, options.cancel, attempt == 0);
            if (!lease) return lease.error();
            Connection& connection = *lease->connection;
            ExchangeOutcome outcome;
            {
                FdRegistration registration(options.cancel, connection.fd());
                outcome = exchange(connection, url, request.body, *request.headers, params);
            }
            const bool resend = lease->reused && attempt == 0 && outcome.error && outcome.stale_connection &&
                                !outcome.any_response_byte;
            pool->checkin(std::move(lease->connection), outcome.reusable);
            if (resend) {
                pool_counters().resent.fetch_add(1, std::memory_order_relaxed);
                pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
                log(LogLevel::debug, "stale pooled connection to " + url.origin() + ": resending once");
                continue;
            }
            if (outcome.error) return std::move(*outcome.error);
            Response response = std::move(*outcome.response);
            response.connection_reused = lease->reused;
            response.timings.resolve = lease->timings.resolve;
            response.timings.connect = lease->timings.connect;
            response.timings.tls = lease->timings.tls;
            response.timings.total = micros(Clock::now() - start);
            return response;
        }
    }
};

}  // namespace

std::shared_ptr<Backend> make_pooled_backend() { return std::make_shared<PooledBackend>(); }

}  // namespace nous::http::detail
