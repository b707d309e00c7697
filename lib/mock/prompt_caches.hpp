#pragma once
// The mock's prompt cache (nous_mock internal): a request that marks its
// prompt for caching (Anthropic cache_control, Bedrock cachePoint, the
// OpenAI formats' prompt_cache_key) writes it the first time and reads it
// when the same request comes again within the TTL, and its usage says so,
// as the provider's would: an application's test sees its cost fall.

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

class PromptCaches {
  public:
    /// Sets `reply`'s cache reads or writes for `request` (of `format`).
    void apply(Format format, const MockRequest& request, Reply& reply);

  private:
    std::mutex mutex_;
    std::map<std::string, std::chrono::steady_clock::time_point> until_;
};

}  // namespace nous::http::mock
