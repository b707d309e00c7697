#pragma once
// Test seams: not for production code. Options::test_hooks points at one of
// these so that tests can drive time, sleeping and randomness of the retry
// policy and assert the exact delays requested.

#include <chrono>
#include <functional>

#include "nous/http/options.hpp"

namespace nous::http::testing {

struct Hooks {
    /// Replaces the steady clock of the retry policy.
    std::function<std::chrono::steady_clock::time_point()> now;
    /// Replaces the wait between attempts.
    std::function<void(Milliseconds)> sleep;
    /// Uniform in [0, 1): the jitter source.
    std::function<double()> random;
};

/// Drops the TLS session every origin keeps for resumption (pooled backend):
/// the next new connection to each makes a full handshake. Connections
/// already open are not touched (pool_clear() closes the idle ones). For
/// benchmarks of the full handshake and for tests.
void forget_tls_sessions();

}  // namespace nous::http::testing
