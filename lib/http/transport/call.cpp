// The call pipeline: validate, prepare, and attempts with the one stale resend.

#include "transport/call.hpp"

#include "core/headers.hpp"
#include "core/log.hpp"
#include "core/proxy.hpp"
#include "core/uuid.hpp"

namespace nous::http::detail {

Result<Url> validate_call(std::string_view url, std::string_view body, const Headers& headers) {
    auto parsed = parse_url(url);
    if (!parsed) return parsed.error();
    if (auto e = validate_request_headers(body, headers)) return *e;
    return parsed;
}

Result<PreparedCall> prepare_call(Url url, const Headers& headers, const Options& options,
                                  const EnvSnapshot& env, const Config& config) {
    PreparedCall call;
    if (auto e = prepare_call_into(call, std::move(url), headers, options, env, config)) return *e;
    return call;
}

std::optional<Error> prepare_call_into(PreparedCall& call, Url url, const Headers& headers,
                                       const Options& options, const EnvSnapshot& env,
                                       const Config& config) {
    auto proxy = proxy_for(url, env);
    if (!proxy) return proxy.error();
    call.url = std::move(url);
    call.proxy = std::move(proxy.value());
    call.settings = effective_settings(options, config);
    call.options = &options;
    if (!call.proxy.empty() && !call.url.https) {
        auto proxy_url = parse_url(call.proxy);
        if (proxy_url && !proxy_url->userinfo.empty())
            call.proxy_authorization = basic_auth(proxy_url->userinfo);
    }
    bool has_authorization = false, has_idempotency_key = false;
    for (const auto& [name, value] : headers) {
        has_authorization |= header_name_equals(name, "authorization");
        has_idempotency_key |= header_name_equals(name, "idempotency-key");
    }
    // `user:pass@` in the URL is sent as Basic auth, as curl does, never
    // dropped silently; the caller's own Authorization wins.
    if (!call.url.userinfo.empty() && !has_authorization)
        call.extra_headers.emplace_back("Authorization", basic_auth(call.url.userinfo));
    // One key for every attempt of this call, retries on or off: a server
    // honouring the header drops the duplicate of a request lost after it was
    // sent, and only a request with a key is resent after a stale reuse.
    if (options.idempotency_key && !has_idempotency_key) {
        call.extra_headers.emplace_back("Idempotency-Key", uuid_v4());
        has_idempotency_key = true;
    }
    call.has_idempotency_key = has_idempotency_key;
    return std::nullopt;
}

Attempt::Attempt(const PreparedCall& call, const CancelToken* cancel, char* buffer,
                 std::size_t buffer_size, std::size_t grow_to)
    : call_(call), buffer_(buffer), buffer_size_(buffer_size), grow_to_(grow_to) {
    params_.cancel = cancel;
    params_.max_error_body_bytes = call.settings.max_error_body_bytes;
    params_.proxy_authorization = call.proxy_authorization;
    params_.extra_headers = call.extra_headers.empty() ? nullptr : &call.extra_headers;
}

Attempt::~Attempt() {
    reader_.reset();
    registration_.reset();
    if (transport_) pool_->checkin(std::move(transport_), false);
}

void Attempt::release() {
    if (!transport_) return;
    const bool reusable = reader_ && reader_->reusable();
    reader_.reset();
    registration_.reset();
    pool_->checkin(std::move(transport_), reusable);
}

std::optional<Error> Attempt::open(const Deadlines& deadlines, std::string_view body,
                                   const Headers& headers) {
    params_.deadlines = deadlines;
    if (!pool_) pool_ = pool_for(call_.url, call_.proxy, *call_.options, call_.settings.pool);
    // The first try may reuse an idle connection. A reused connection that
    // turns out stale before any response byte is resent once, on a new one,
    // when the server cannot have acted on the request: it did not go out
    // whole, or it carries an Idempotency-Key that lets the server drop the
    // duplicate. A whole request without a key on a connection that then
    // closed may have been acted on (a gateway that read it and gave up
    // during a long completion): connection_closed, and the retry policy decides.
    for (int resends = 0;; ++resends) {
        auto lease = pool_->checkout(params_.deadlines, params_.cancel, resends == 0);
        if (!lease) return lease.error();
        transport_ = std::move(lease->transport);
        reused_ = lease->reused;
        timings_ = lease->timings;
        registration_.emplace(params_.cancel, transport_.get());
        reader_.emplace(*transport_, params_, buffer_, buffer_size_, grow_to_);
        std::optional<Error> error = reader_->send(call_.url, body, headers, call_.method);
        if (!error) error = reader_->read_head();
        if (!error) return std::nullopt;
        const bool stale = reused_ && resends == 0 && !reader_->any_response_byte() &&
                           reader_->stale_connection() &&
                           (!reader_->request_sent() || call_.has_idempotency_key);
        reader_.reset();
        registration_.reset();
        pool_->checkin(std::move(transport_), false);
        if (!stale) return error;
        pool_counters().resent.fetch_add(1, std::memory_order_relaxed);
        pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
        log(LogLevel::debug,
            "stale pooled connection to " + call_.url.origin() + ": resending once");
    }
}

}  // namespace nous::http::detail
