// libFuzzer: Retry-After (seconds or an HTTP-date), retry-after-ms and Google
// RetryInfo in a JSON body, and whether the body says the quota is exhausted:
// any bytes, never a crash, never a negative delay.

#include <string>

#include "codec/retry_hint.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    // First line: Retry-After; second: retry-after-ms; the rest: the body.
    auto nl = text.find('\n');
    std::string_view first = text.substr(0, nl);
    std::string_view rest = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto nl2 = rest.find('\n');
    std::string_view second = rest.substr(0, nl2);
    std::string_view body =
        nl2 == std::string_view::npos ? std::string_view() : rest.substr(nl2 + 1);
    using nous::http::Headers;
    for (const Headers& headers : {Headers{{"retry-after", std::string(first)}},
                                   Headers{{"retry-after-ms", std::string(second)}}, Headers{}}) {
        auto hint = nous::http::detail::parse_retry_hint(headers, body);
        if (hint) nous::fuzz::require(hint->count() >= 0);
    }
    (void)nous::http::detail::parse_http_date(first);
    // The quota-exhaustion reading of the same error body: any bytes, no crash.
    (void)nous::http::detail::says_quota_exhausted(body);
    return 0;
}
