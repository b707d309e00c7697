// libFuzzer: URL parsing and the redacted forms logs may show.

#include <string>

#include "core/url.hpp"
#include "fuzz_support.hpp"
#include "nous/http/client.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto url = nous::http::detail::parse_url(text);
    if (url) {
        nous::fuzz::require(!url->host.empty());
        nous::fuzz::require(url->port != 0);
        nous::fuzz::require(!url->target.empty() && url->target[0] == '/');
        (void)url->host_header();
        (void)url->origin();
        // A parsed URL re-parses to the same origin.
        auto again = nous::http::detail::parse_url(url->origin() + url->target);
        nous::fuzz::require(again.ok() && again->origin() == url->origin());
    }
    const std::string redacted = nous::http::redact_url(text);
    const std::string logged = nous::http::detail::url_for_log(text);
    nous::fuzz::require(logged.find('?') == std::string::npos);
    (void)nous::http::detail::is_ip_literal(text);
    (void)redacted;
    return 0;
}
