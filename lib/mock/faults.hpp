#pragma once
// The faults the mock plays on request (the `x-mock-fault` request header),
// each in the provider's own format, and the operations headers (request id,
// rate limits) it sends on every chat reply. docs/llm.md "Testing against the mock".

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"
#include "rate_limits.hpp"

namespace nous::http::mock {

enum class Fault {
    none,
    rate_limit,        ///< 429 with a retry hint and exhausted rate-limit headers
    quota,             ///< 429 that says the quota (or the credit) is gone
    overloaded,        ///< Anthropic 529 overloaded_error; 503 in the others' shapes
    server_error,      ///< 500
    midstream_error,   ///< a few tokens, then the provider's in-stream error
    truncate,          ///< a few tokens, then a clean end before the terminal event
    keepalive_only,    ///< keep-alive comments (Anthropic: pings) and nothing else
    slow_first_token,  ///< keep-alives for x-mock-fault-ms (default 1000), then the reply
    schema_violation,  ///< a structured answer that breaks the request's schema
    refusal,           ///< the model refuses (OpenAI refusal, Anthropic stop_reason refusal)
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

/// The fault a request asks for (its x-mock-fault header, else `default_fault`,
/// the server's --fault); nullopt (and `error`, a 400) for a name the mock does not know.
std::optional<Fault> requested_fault(const MockRequest& request, const std::string& default_fault,
                                     MockResponse& error);
/// Whether `name` is a fault the mock plays ("" is none).
bool is_fault_name(const std::string& name);

/// How long slow_first_token waits: x-mock-fault-ms, else 1000 ms.
std::chrono::milliseconds fault_delay(const MockRequest& request);

/// A request id as each provider names it (Anthropic: request-id), and the
/// rate-limit headers each sends of `limits` (OpenAI's Go-style resets;
/// Anthropic's RFC 3339 times).
HeaderList operations_headers(Format format, const std::string& request_id,
                              const LimitState& limits);
/// The limits the rate_limit fault reports: nothing left, back in 20 ms.
LimitState exhausted_limits();

/// The provider's 429 for a request past the server's --rpm / --tpm: its
/// rate-limit error with `retry-after` (seconds to the window's end; Gemini:
/// RetryInfo), and the operations headers of `limits`.
MockResponse limit_reply(Format format, const std::string& request_id, const LimitState& limits);

/// The whole error reply of a fault answered before any body (rate_limit,
/// quota, overloaded, server_error); nullopt for the other faults.
std::optional<MockResponse> error_reply(Format format, Fault fault);

/// The event that ends a midstream_error stream, in the provider's shape.
std::string midstream_error_event(Format format);

/// What a provider sends to keep a quiet stream open: a comment, or
/// Anthropic's `ping` event.
std::string_view keepalive_event(Format format);

/// Events sent before a midstream_error or truncate stream stops: the
/// prologue and a few tokens.
inline constexpr std::size_t kTokensBeforeFault = 3;

}  // namespace nous::http::mock
