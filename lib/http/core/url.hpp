#pragma once
// URL parsing for http/https request targets, and the redacted forms that
// logs and verbose output may show.

#include <cstdint>
#include <string>
#include <string_view>

#include "nous/http/result.hpp"

namespace nous::http::detail {

struct Url {
    bool https = false;
    std::string host;  ///< without IPv6 brackets; lower case
    std::uint16_t port = 0;
    std::string target;    ///< path and query, at least "/"
    std::string userinfo;  ///< "user:pass" as written (percent-encoded) when present
    bool host_is_ipv6 = false;

    std::string scheme() const { return https ? "https" : "http"; }
    /// host[:port] as sent in the Host header (brackets for IPv6, port when not default).
    std::string host_header() const;
    /// "scheme://host:port": the origin key part.
    std::string origin() const;
};

/// Parses and validates: scheme http or https, a host, a port in 1..65535,
/// no whitespace or control characters. Errors are invalid_argument.
Result<Url> parse_url(std::string_view text);

/// The URL with `user:pass@` and the value of a `key` query parameter
/// replaced by [REDACTED] (for -v output).
std::string redact_url(std::string_view url);
/// scheme://host:port/path without query or fragment (for logs).
std::string url_for_log(std::string_view url);

/// True when `host` is an IPv4 or IPv6 literal (without brackets).
bool is_ip_literal(std::string_view host);
bool is_ipv4_literal(std::string_view text) noexcept;
bool is_ipv6_literal(std::string_view text) noexcept;

}  // namespace nous::http::detail
