#pragma once
// One request/response exchange on an open connection.

#include <optional>
#include <string>

#include "connection.hpp"
#include "http1_parser.hpp"

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

/// One response read in steps: send the request, read the head (every 1xx
/// skipped), then the body whole (post) or piece by piece (streams). Shared by
/// exchange() and the stream backends so that framing is judged in one place.
class ResponseReader {
public:
    /// `buffer` holds bytes read past the head; it must outlive the reader.
    ResponseReader(Connection& connection, const ExchangeParams& params, char* buffer, std::size_t size);

    std::optional<Error> send(const Url& url, std::string_view body, const Headers& headers);
    std::optional<Error> read_head();
    const ResponseHead& head() const noexcept { return head_; }
    ResponseHead& head() noexcept { return head_; }

    /// The whole body into `out` (a Content-Length body is sized once and read
    /// into directly); too_large past `limit`.
    std::optional<Error> read_whole_body(std::string& out, std::size_t limit);

    enum class Piece { data, end, error };
    /// Appends the next decoded body bytes (at most one socket read's worth) to `out`.
    Piece read_body_piece(std::string& out, Error& error);

    bool any_response_byte() const noexcept { return any_response_byte_; }
    /// The failure looked like a peer that had closed an idle connection.
    bool stale_connection() const noexcept { return stale_connection_; }
    /// The response was read to its end and the connection may serve another request.
    bool reusable() const noexcept;
    Clock::time_point first_byte() const noexcept { return first_byte_; }

private:
    std::optional<Error> fill();  ///< reads more into buffer_ (head phase)

    Connection& connection_;
    const ExchangeParams& params_;
    char* buffer_;
    std::size_t size_;
    std::size_t have_ = 0, used_ = 0;
    ResponseHead head_;
    BodyFramer framer_;
    bool any_response_byte_ = false;
    bool stale_connection_ = false;
    bool body_started_ = false;
    Clock::time_point first_byte_{};
};

/// The http_status error for a non-2xx head and its body (retry hint parsed).
Error http_status_error(ResponseHead& head, std::string body);

/// Retry hint of an error response: retry-after-ms, Retry-After (seconds or
/// HTTP-date), or Google RetryInfo.retryDelay in a JSON body.
std::optional<Milliseconds> parse_retry_hint(const Headers& headers, std::string_view body);

}  // namespace nous::http::detail
