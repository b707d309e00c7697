#pragma once
// The bytes of a request head, written by us (never by POCO).

#include <string>

#include "core/url.hpp"
#include "nous/http/error.hpp"

namespace nous::http::detail {

/// Serializes the request head: request line, Host, Content-Length (always),
/// default Content-Type and User-Agent, Proxy-Authorization and `extra`
/// headers (set by the library) when given, then the caller's headers.
/// The caller's headers were validated (no CR/LF/NUL, framing rules).
std::string serialize_request_head(const Url& url, std::size_t body_size, const Headers& headers,
                                   bool absolute_form, const std::string& proxy_authorization,
                                   const Headers& extra = {}, std::string_view method = "POST");

}  // namespace nous::http::detail
