#pragma once
// What a Router offers only to its benchmark and tests: not part of the API
// a user reads (nous/llm/router.hpp).

#include <cstdint>

#include "nous/llm/router.hpp"

namespace nous::llm::detail {

struct RouterAccess {
    /// One call's bookkeeping without the call: choose a deployment, reserve
    /// its budget (in Redis when the router shares state), settle it as a
    /// success of `estimate` tokens. False when no deployment could take it.
    /// bench/router measures what routing costs a call with it.
    static bool route_once(Router& router, std::int64_t estimate);
    /// Calls waiting now for a deployment (a budget, a cooldown or a slot):
    /// tests hold a call in flight until another is seen waiting.
    static int waiting(const Router& router);
};

}  // namespace nous::llm::detail
