// Which failures move a routed call on (failover_rules.hpp).

#include "router/failover_rules.hpp"

#include <algorithm>

#include "nous/llm/rate_limit.hpp"

namespace nous::llm::detail {

Failure classify(const Error& error, SystemTime now) {
    using nous::http::ErrorCode;
    Failure f;
    f.reason = std::string(nous::http::to_string(error.code)) + ": " + error.message;
    f.outcome.kind = Outcome::Kind::failure;
    f.outcome.hint = error.retry_after;
    switch (error.code) {
        case ErrorCode::dns_failed:
        case ErrorCode::connect_failed:
        case ErrorCode::connection_closed:
        case ErrorCode::tls_failed:
        case ErrorCode::timeout_connect:
        case ErrorCode::timeout_read:
        case ErrorCode::timeout_total:
        case ErrorCode::pool_timeout:
        case ErrorCode::truncated:
        case ErrorCode::protocol:
            f.failover = true;
            return f;
        case ErrorCode::invalid_argument:
            // This deployment's provider refuses a field of the request (a
            // seed to Anthropic): another may take it; no cooldown.
            f.failover = true;
            f.outcome.kind = Outcome::Kind::neutral;
            return f;
        case ErrorCode::http_status:
            break;
        default:  // cancelled, a local limit, an overflow: the call's own end
            f.outcome.kind = Outcome::Kind::neutral;
            return f;
    }
    f.reason = error.message;  // "HTTP 429: ..." already
    const int s = error.status;
    if (error.quota_exhausted) {
        f.failover = true;
        f.outcome.kind = Outcome::Kind::quota;
        if (auto limit = parse_rate_limit(error.headers, now)) {
            // Cooled until the later of the resets it reported, if it did.
            std::optional<SystemTime> until;
            for (const auto& reset : {limit->requests_reset, limit->tokens_reset})
                if (reset) until = until ? std::max(*until, *reset) : *reset;
            f.outcome.quota_until = until;
        }
        f.reason += " (quota exhausted)";
        return f;
    }
    if (s == 408 || s == 409 || s == 429 || s >= 500 || s == 401 || s == 403 || s == 404) {
        f.failover = true;
        return f;
    }
    f.outcome.kind = Outcome::Kind::neutral;  // 400, 413, 422...: the request's own fault
    return f;
}

Failure classify_stream_error(const std::string& stream_error) {
    Failure f;
    f.failover = true;
    f.outcome.kind = Outcome::Kind::failure;
    f.reason = "error in the stream before any content: " + stream_error;
    return f;
}

}  // namespace nous::llm::detail
