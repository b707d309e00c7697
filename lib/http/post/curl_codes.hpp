#pragma once
// libcurl's results in our terms: a CURLcode as an ErrorCode, the HTTP
// version libcurl spoke as text (the curl backend only).

#include <curl/curl.h>

#include <string>
#include <string_view>

#include "nous/http/error.hpp"

namespace nous::http::detail {

/// The error code of a failed transfer: `any_byte` when a response byte had
/// arrived, `connected` when the connection was made, `detail` libcurl's error
/// text (a few framing errors are told apart only there).
ErrorCode map_code(CURLcode rc, bool any_byte, bool connected, std::string_view detail);

/// "HTTP/1.0", "HTTP/1.1", "HTTP/2" or "HTTP/3" for CURLINFO_HTTP_VERSION.
std::string version_name(long version);

}  // namespace nous::http::detail
