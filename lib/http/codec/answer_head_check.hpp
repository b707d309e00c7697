#pragma once
// What a 2xx answer's head must say before its body is read as the answer:
// a body in a coding this client never asked for and does not decode, or a
// whole JSON document where an event stream was asked for, would otherwise
// reach the caller as bytes that are not the answer (an empty stream, or
// "invalid JSON" naming nothing), never as what went wrong.

#include <optional>

#include "nous/http/client.hpp"

namespace nous::http::detail {

/// A protocol error when the answer's Content-Encoding names a coding other
/// than identity and the request carried no Accept-Encoding of the caller's
/// (a caller who asks for gzip decodes it). The library sends none, so a
/// server that compresses anyway is the one at fault.
std::optional<Error> unasked_content_coding(const Headers& answer, const Headers& request);

/// A protocol error when an event stream was asked for and the answer is a
/// JSON document (application/json or a +json type): the server did not
/// stream. Its body, read by the caller, goes into the error.
std::optional<Error> whole_json_for_stream(const Headers& answer);

/// Status, headers and (capped) body of the answer moved into `e`, as an
/// http_status error carries them.
Error with_answer(Error e, int status, Headers headers, std::string body);

}  // namespace nous::http::detail
