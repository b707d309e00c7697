#pragma once
// Header validation and redaction shared by every backend and nouscli.

#include <optional>
#include <string>
#include <string_view>

#include "nous/http/client.hpp"

namespace nous::http::detail {

/// validate_headers (public: nous/http/client.hpp), plus the framing rules: a caller's
/// Content-Length must equal the body size and Transfer-Encoding is refused (the framing is ours).
std::optional<Error> validate_request_headers(std::string_view body, const Headers& headers);

/// The first value of header `name` (ASCII case ignored), or none.
std::optional<std::string_view> find_header(const Headers& headers, std::string_view name);

/// True for headers whose values are secrets (Authorization, Proxy-Authorization,
/// Cookie, x-api-key, api-key, x-goog-api-key).
bool is_secret_header(std::string_view name) noexcept;

/// "Name: value" with secret values replaced by [REDACTED].
std::string redacted_header_line(std::string_view name, std::string_view value);

/// Header names with every value replaced by [REDACTED], for argument errors.
std::string header_names_for_log(const Headers& headers);

}  // namespace nous::http::detail
