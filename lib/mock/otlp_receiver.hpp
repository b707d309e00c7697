#pragma once
// The mock's OTLP/HTTP receiver (nous_mock internal): POST /v1/traces and
// /v1/metrics take OTLP JSON as a collector would (415 for another content
// type, 400 for a body that is not an export request), and keep each body in
// memory; GET /otlp lists them, {"traces":[...],"metrics":[...]}, oldest
// first. docs/telemetry.md.

#include <mutex>
#include <string>
#include <vector>

#include "nous/mock/mock_server.hpp"

namespace nous::http::mock {

class OtlpReceiver {
  public:
    /// Whether `route` is one of the receiver's (then `response` is its answer).
    bool answer(const MockRequest& request, const std::string& route, MockResponse& response);

  private:
    /// The bodies kept are bounded: the oldest go first past this many.
    static constexpr std::size_t kKept = 4096;
    std::mutex mutex_;
    std::vector<std::string> traces_, metrics_;
};

}  // namespace nous::http::mock
