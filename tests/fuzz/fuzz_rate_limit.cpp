// libFuzzer: rate-limit headers (Go-style durations, RFC 3339 times, counts):
// any bytes as every header's value, never a crash, a reset never before the
// response unless the server named a past time.

#include <string>

#include "fuzz_support.hpp"
#include "nous/llm/rate_limit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)nous::llm::parse_rfc3339(text);
    if (auto d = nous::llm::parse_go_duration(text)) nous::fuzz::require(d->count() >= 0);
    nous::http::Headers headers;
    for (const char* name : {"x-ratelimit-limit-requests", "x-ratelimit-remaining-tokens",
                             "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens",
                             "anthropic-ratelimit-requests-reset",
                             "anthropic-ratelimit-input-tokens-remaining", "retry-after"})
        headers.emplace_back(name, text);
    const auto now = std::chrono::system_clock::from_time_t(1'700'000'000);
    if (auto rl = nous::llm::parse_rate_limit(headers, now)) {
        if (rl->requests_remaining) nous::fuzz::require(*rl->requests_remaining >= 0);
        if (rl->retry_after) nous::fuzz::require(rl->retry_after->count() >= 0);
    }
    return 0;
}
