#pragma once
// Errors are values: one enumerated code whose meaning is documented here,
// plus the details a caller needs to act on it.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nous::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

enum class ErrorCode {
    /// The call was refused before anything was sent: bad URL (scheme, host,
    /// port), a header name or value containing CR, LF or NUL, an unknown
    /// backend named per call, or an invalid option.
    invalid_argument,
    /// Name resolution failed (no such host, or the resolver errored).
    dns_failed,
    /// No connection could be made: every resolved address refused or was
    /// unreachable, a proxy refused the tunnel, or no socket could be created
    /// (EMFILE, ENFILE: the message names the cause). Nothing was sent.
    connect_failed,
    /// The TLS handshake failed: untrusted chain, host name mismatch,
    /// protocol below TLS 1.2, or a bad `ca_file`.
    tls_failed,
    /// The connect deadline (resolution + TCP + TLS handshake) passed.
    timeout_connect,
    /// No byte arrived within the idle read timeout (response headers included).
    timeout_read,
    /// The per-call total deadline passed.
    timeout_total,
    /// Every pooled connection of the origin stayed checked out for the
    /// whole connect timeout.
    pool_timeout,
    /// The call was cancelled through its CancelToken.
    cancelled,
    /// The framing proves the response incomplete: body short of its
    /// Content-Length, chunked body without its last chunk, a reset or a TLS
    /// EOF without close_notify mid-body; or a JSON-array / NDJSON stream
    /// whose data ends inside an item. (An SSE event still missing its blank
    /// line at a clean end is discarded, as WHATWG says: not an error.)
    truncated,
    /// The peer sent something that is not HTTP/1.x: bad status line, bad
    /// header, bad chunk size, more than 100 header fields or 64 KiB of headers.
    protocol,
    /// The response body (or error body) exceeds the configured maximum.
    too_large,
    /// The server answered with a status outside 2xx (redirects included:
    /// they are never followed). `status`, `headers`, `body` and
    /// `retry_after` are set.
    http_status,
    /// A stream's reader stayed parked longer than its maximum wait.
    backpressure_overflow,
    /// One stream event carried more data than the decoder cap.
    buffer_overflow,
    /// A limit of this process was reached: the concurrent streams cap, or no
    /// thread could be started (EAGAIN); the message names which.
    saturated,
    /// The selected backend cannot serve the call (not compiled in, or a
    /// custom backend reported it could not run).
    backend_unavailable,
    /// A connection was made and then closed or reset before any response
    /// byte arrived, after all or part of the request went out (after the one
    /// transparent resend of a stale pooled connection). The server may have
    /// acted on the request: retries carry one Idempotency-Key.
    connection_closed,
    /// The stream's data is not its format: an NDJSON line or a JSON-array
    /// item that is not JSON (or nests deeper than 256 levels), a JSON array
    /// stream that does not start with `[`. The HTTP exchange itself was fine.
    malformed_stream,
};

/// Stable lower-case name of a code, e.g. "timeout_read".
std::string_view to_string(ErrorCode code) noexcept;

struct Error {
    ErrorCode code;
    std::string message;
    /// HTTP status when the server answered (http_status; else 0).
    int status = 0;
    /// Response headers, lower-case names, when the server answered.
    Headers headers;
    /// Response body when the server answered (capped at the error body limit).
    std::string body;
    /// Server's retry hint (Retry-After, retry-after-ms, Google RetryInfo).
    std::optional<std::chrono::milliseconds> retry_after;
    /// In-flight bytes at the time of a backpressure overflow.
    std::size_t inflight_bytes = 0;
    /// http_status: the server's request id (Response::request_id), for its support.
    std::string request_id;
    /// http_status: the body says the account's quota is exhausted, which no
    /// retry fixes (OpenAI `insufficient_quota`; Gemini `RESOURCE_EXHAUSTED`
    /// whose QuotaFailure names a per-day quota; Anthropic `billing_error`).
    /// Never retried, whatever the status or `x-should-retry` say. A 429 without
    /// it is a rate limit: retried after its hint.
    bool quota_exhausted = false;

    /// Every Error is a real one: there is no "no error yet" value (an
    /// absent error is an empty std::optional<Error>).
    Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}
};

}  // namespace nous::http
