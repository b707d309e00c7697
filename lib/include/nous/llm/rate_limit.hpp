#pragma once
// A provider's rate-limit headers in one struct: how much budget is left and
// when it comes back. OpenAI `x-ratelimit-*` (resets as Go-style durations:
// `1s`, `6m0s`, `12ms`, `1h2m3.5s`), Anthropic `anthropic-ratelimit-*`
// (resets as RFC 3339 times), and `retry-after`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "nous/http/error.hpp"

namespace nous::llm {

struct RateLimit {
    using Time = std::chrono::system_clock::time_point;
    std::optional<std::int64_t> requests_limit, requests_remaining;
    std::optional<Time> requests_reset;  ///< when the request budget is whole again
    /// Tokens: OpenAI's and Anthropic's combined budget; Anthropic's input-token
    /// budget when it sends no combined one.
    std::optional<std::int64_t> tokens_limit, tokens_remaining;
    std::optional<Time> tokens_reset;
    std::optional<std::chrono::milliseconds> retry_after;  ///< `retry-after` seconds
    Time received_at{};                                    ///< the `now` it was parsed against
};

/// The rate limit the headers report, resets made absolute against `now`
/// (the time the response arrived); nullopt when they report none.
std::optional<RateLimit> parse_rate_limit(const nous::http::Headers& headers,
                                          RateLimit::Time now = std::chrono::system_clock::now());

/// A Go-style duration (`1s`, `6m0s`, `12ms`, `1h2m3.5s`, `250us`), as OpenAI
/// writes its resets; nullopt for anything else.
std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text);

/// An RFC 3339 time (`2024-05-01T12:00:30Z`, fractions and offsets allowed).
std::optional<RateLimit::Time> parse_rfc3339(std::string_view text);

}  // namespace nous::llm
