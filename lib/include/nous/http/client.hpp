#pragma once
// The blocking client API: post() and its helpers.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nous/http/error.hpp"
#include "nous/http/options.hpp"
#include "nous/http/result.hpp"

namespace nous::http {

struct Timings {
    std::chrono::microseconds resolve{0};  ///< name resolution (0 when reused)
    std::chrono::microseconds connect{0};  ///< TCP connect (0 when reused)
    std::chrono::microseconds tls{0};      ///< TLS handshake (0 when reused / plain)
    std::chrono::microseconds ttfb{0};     ///< request start to first response byte
    std::chrono::microseconds total{0};    ///< the whole call
};

struct Response {
    int status = 0;
    /// Lower-case names, in arrival order.
    Headers headers;
    std::string body;
    /// "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    std::string http_version;
    Timings timings;
    /// True when a pooled keep-alive connection served the request.
    bool connection_reused = false;
    /// The server's id of this request, for the provider's support: the first
    /// of `x-request-id` (OpenAI and most), `request-id` (Anthropic),
    /// `x-generation-id` (OpenRouter); empty when it sent none.
    std::string request_id;

    /// First value of a header (name compared case-insensitively).
    std::optional<std::string_view> header(std::string_view name) const;
};

/// The request id among response headers (see Response::request_id); "" when none.
/// A byte outside printable ASCII is '?': the id is quoted to a provider's
/// support and written into JSON, and a header value may hold any byte.
std::string request_id_of(const Headers& headers);

/// POST `body` to `url`. Never throws; every failure is an Error value.
Result<Response> post(std::string_view url, std::string_view body, const Headers& headers = {},
                      const Options& options = {});

/// As post(), with another method ("GET", "PUT"...): the same pipeline,
/// backends, retry policy and errors. A GET sends no body (`body` must be
/// empty). For the small side calls a client makes (a cloud's metadata
/// server, a token endpoint).
Result<Response> request(std::string_view method, std::string_view url, std::string_view body = {},
                         const Headers& headers = {}, const Options& options = {});

/// Throwing convenience: returns the Response or throws HttpError.
Response post_or_throw(std::string_view url, std::string_view body, const Headers& headers = {},
                       const Options& options = {});

// ---- header helpers (an empty key or value adds nothing) -------------------

/// {"authorization", "Bearer KEY"}.
void add_bearer_auth(Headers& headers, std::string_view api_key);
/// {name, KEY}, e.g. "x-api-key" (Anthropic) or "api-key" (Azure).
void add_api_key(Headers& headers, std::string_view header_name, std::string_view api_key);
/// {"openai-organization", ORG}.
void add_openai_organization(Headers& headers, std::string_view organization);
/// {"openai-project", PROJECT}.
void add_openai_project(Headers& headers, std::string_view project);

/// Case-insensitive header name comparison.
bool header_name_equals(std::string_view a, std::string_view b) noexcept;

// ---- checks and redaction (what post() refuses, what logs may show) --------

/// invalid_argument when `url` is not an http or https URL post() can call
/// (scheme, host, port 1..65535, no white space or control characters).
std::optional<Error> validate_url(std::string_view url);
/// invalid_argument when a header name is empty or not an HTTP token, or a
/// name or value holds CR, LF or NUL. The message names the header, never its value.
std::optional<Error> validate_headers(const Headers& headers);
/// `url` safe to print: `user:pass@` and the value of a `key` query parameter
/// become [REDACTED].
std::string redact_url(std::string_view url);
/// "Name: value", the value shown as [REDACTED] for secret headers
/// (Authorization, Proxy-Authorization, Cookie, x-api-key, api-key, x-goog-api-key).
std::string redact_header(std::string_view name, std::string_view value);

// ---- observability ----------------------------------------------------------

/// Process-wide counters of the pooled backend.
struct PoolStats {
    std::uint64_t connections_created = 0;   ///< new TCP (and TLS) connections
    std::uint64_t connections_reused = 0;    ///< requests served by a pooled connection
    std::uint64_t stale_discarded = 0;       ///< idle connections found closed or expired
    std::uint64_t resent = 0;                ///< requests resent once on a stale connection
    std::uint64_t tls_sessions_resumed = 0;  ///< TLS handshakes that resumed a session
};
PoolStats pool_stats();
/// Close every idle pooled connection (tests, and apps before fork()). The
/// curl backend keeps one connection per calling thread: each thread's is
/// closed at that thread's next call.
void pool_clear();

}  // namespace nous::http
