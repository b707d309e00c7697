#pragma once
// What an error response says about retrying, and the http_status error itself.

#include <optional>
#include <string>
#include <string_view>

#include "codec/http1_parser.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

/// Retry hint of an error response: retry-after-ms, Retry-After (seconds or
/// HTTP-date), or Google RetryInfo.retryDelay in a JSON body. A body that is
/// not JSON, or nests too deep, only loses its hint.
std::optional<Milliseconds> parse_retry_hint(const Headers& headers, std::string_view body);

/// Seconds since the epoch of an HTTP-date in any of RFC 9110's three forms
/// (IMF-fixdate, obsolete RFC 850, asctime), independent of the C locale.
std::optional<long long> parse_http_date(std::string_view text);

/// Whether an error body says the account's quota is exhausted (see
/// Error::quota_exhausted). A body that is not JSON says nothing.
bool says_quota_exhausted(std::string_view body);

/// The http_status error for a non-2xx head and its body: retry hint, request
/// id and quota exhaustion read from them.
Error http_status_error(ResponseHead& head, std::string body);

}  // namespace nous::http::detail
