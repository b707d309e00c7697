#pragma once
// Proxy selection from the environment. POCO reads none of these variables
// (docs/design/poco-traps.md#proxy-env).

#include <string>

#include "core/env.hpp"
#include "core/url.hpp"
#include "nous/http/result.hpp"

namespace nous::http::detail {

/// The proxy URL for `url`: https_proxy / HTTPS_PROXY for https, lower-case
/// http_proxy only for http (upper-case HTTP_PROXY is ignored, as curl does,
/// against httpoxy), unless no_proxy / NO_PROXY matches the host. Empty: direct.
/// invalid_argument for a proxy URL we cannot use.
Result<std::string> proxy_for(const Url& url, const EnvSnapshot& env);

/// "Basic base64(user:password)" from the userinfo of a URL, percent-decoded
/// first (`p%40ss` is the password `p@ss`), as curl does.
std::string basic_auth(std::string_view userinfo);

/// Whether a no_proxy list ("a.com,.b.org,10.0.0.1,*") matches host[:port].
bool no_proxy_matches(std::string_view list, std::string_view host, std::uint16_t port);

}  // namespace nous::http::detail
