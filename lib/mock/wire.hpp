#pragma once
// The mock server's side of HTTP/1.1 on a raw socket: read one request,
// write a response, a chunk. Raw sockets, so that the server can serve any
// number of keep-alive connections and tests can see exactly what was sent.

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nous/mock/mock_server.hpp"

namespace nous::http::mock {

/// ASCII lower case (header names).
std::string lower(std::string s);
/// Writes all of `data` (MSG_NOSIGNAL); false if the peer is gone.
bool send_all(int fd, std::string_view data);
/// The reason phrase of the statuses the mock sends.
std::string reason_for(int status);
/// What read_request() found.
enum class ReadRequest {
    request,    ///< a whole request is in `request`
    closed,     ///< EOF, an error, or `idle_close` passed with no byte of a next request
    too_large,  ///< a body over `max_body`: 413
    malformed,  ///< a framing the mock cannot read: 400, `why` says which, and the connection
                ///< closes
};
/// Reads one request (head + a Content-Length or chunked body) into
/// `request`, keeping bytes past it in `buffer`. The Content-Length is
/// checked against `max_body` before any arithmetic with it, so no value
/// wraps a sum; a chunked body is held to `max_body` as it is decoded. A
/// Content-Length that is not a number, a Transfer-Encoding other than
/// chunked, or both headers at once (RFC 9112 6.3: a smuggling attempt as
/// often as not) is `malformed`, with `why`.
ReadRequest read_request(int fd, std::string& buffer, MockRequest& request,
                         std::chrono::milliseconds idle_close, std::uint64_t max_body,
                         std::string& why);
/// A whole response with Content-Length. `body` may be a static buffer.
/// `nagle`: head and body in two writes (the body waits for the client's ACK).
bool write_response(int fd, int status,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    std::string_view body, bool nagle);
/// One chunk of a chunked body; `last` adds the terminating chunk in the same write.
bool write_chunk(int fd, std::string_view data, bool last = false);

}  // namespace nous::http::mock
