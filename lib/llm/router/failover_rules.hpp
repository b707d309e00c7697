#pragma once
// Which failures move a routed call to the next deployment, and what each
// does to the deployment that failed (nous_llm internal). docs/router.md,
// "Failover".

#include <string>

#include "nous/llm/result.hpp"
#include "router/limits_store.hpp"

namespace nous::llm::detail {

struct Failure {
    /// Another deployment may answer: a connection, TLS or timeout failure,
    /// 408/409/429/5xx, an overloaded or quota answer, a key or model this
    /// deployment does not have (401/403/404), a request field its provider
    /// refuses. Not: a request the provider calls malformed (400, 413, 422),
    /// a cancel, a local limit.
    bool failover = false;
    Outcome outcome;     ///< the cooldown it earns (neutral: none)
    std::string reason;  ///< for the report and the error
};

/// A failure before any content reached the caller.
Failure classify(const Error& error, SystemTime now);
/// A stream that ended with the provider's error event before any content.
Failure classify_stream_error(const std::string& stream_error);

}  // namespace nous::llm::detail
