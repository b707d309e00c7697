#pragma once
// Anthropic's prompt caching breakpoints (nous_llm internal; docs/cost.md).

#include <optional>

#include "formats/wire_format.hpp"

namespace nous::llm::detail {

/// The request's cache settings into Anthropic's `body` (its own, as a
/// document): refused settings named, a breakpoint on a part the request
/// lacks refused.
std::optional<Error> write_anthropic_cache(rapidjson::Document& body, const ChatRequest& request,
                                           const WireFormat& format);

}  // namespace nous::llm::detail
