#pragma once
// One request/response exchange on an open connection.

#include <optional>
#include <string>

#include "connection.hpp"

namespace nous::http::detail {

struct ExchangeParams {
    Deadlines deadlines;
    const CancelToken* cancel = nullptr;
    std::size_t max_response_bytes = defaults::max_response_bytes;
    std::size_t max_error_body_bytes = defaults::max_error_body_bytes;
    /// "Basic ..." for plain http through an authenticating proxy.
    std::string proxy_authorization;
};

struct ExchangeOutcome {
    std::optional<Response> response;  ///< set on 2xx
    std::optional<Error> error;        ///< set otherwise
    /// Whether any response byte arrived: a stale connection is resent only if none did.
    bool any_response_byte = false;
    /// Whether the failure looks like a peer that closed an idle connection
    /// (write reset, or EOF/reset before any response byte).
    bool stale_connection = false;
    /// Whether the connection may serve another request.
    bool reusable = false;
};

/// Serializes the request head: request line, Host, Content-Length (always),
/// default Content-Type and User-Agent, then the caller's headers.
std::string serialize_request_head(const Url& url, std::size_t body_size, const Headers& headers,
                                   bool absolute_form, const std::string& proxy_authorization);

ExchangeOutcome exchange(Connection& connection, const Url& url, std::string_view body,
                         const Headers& headers, const ExchangeParams& params);

/// Retry hint of an error response: retry-after-ms, Retry-After (seconds or
/// HTTP-date), or Google RetryInfo.retryDelay in a JSON body.
std::optional<Milliseconds> parse_retry_hint(const Headers& headers, std::string_view body);

}  // namespace nous::http::detail
