#pragma once
// The mock's per-key limits (`nouscli mock-server --rpm N --tpm N`): requests
// and tokens per minute, counted in windows aligned to the clock's minute (so
// that every process of a fleet agrees on them), the key being the value of
// the credential header. What the rate-limit headers report comes from here:
// remaining counts that fall for real and the end of the current window as
// the reset. docs/llm.md "Testing against the mock".

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "nous/mock/mock_server.hpp"

namespace nous::http::mock {

/// What the headers of one reply report.
struct LimitState {
    std::int64_t requests_limit = 5000, requests_remaining = 4999;
    std::int64_t tokens_limit = 800000, tokens_remaining = 799000;
    std::chrono::system_clock::time_point reset;  ///< the end of the current window
};

class RateLimiter {
  public:
    /// 0: no limit of that kind (the headers then report fixed counts, real resets).
    RateLimiter(std::int64_t rpm, std::int64_t tpm) : rpm_(rpm), tpm_(tpm) {}

    /// Counts a request of `input_tokens` that will answer `output_tokens`
    /// for `key`, when the key's window has room for it (its input counted
    /// against the tokens left): true, and `state` after it. False, with
    /// `state` (the window's end), when past a limit: nothing is counted.
    bool admit(const std::string& key, std::int64_t input_tokens, std::int64_t output_tokens,
               LimitState& state);

  private:
    struct Window {
        std::int64_t minute = -1;
        std::int64_t requests = 0, tokens = 0;
    };
    const std::int64_t rpm_, tpm_;
    std::mutex mutex_;
    std::map<std::string, Window> windows_;
};

/// The credential a request carries (Authorization, x-api-key,
/// x-goog-api-key, or a `key` query parameter): the limits' key.
std::string credential_of(const MockRequest& request);

}  // namespace nous::http::mock
