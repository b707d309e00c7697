#pragma once
// What a provider answers is JSON, which is UTF-8 (RFC 8259 section 8.1),
// and what we send back is checked as UTF-8 before it leaves
// (chat_request.cpp). An answer's text that is not UTF-8 would reach the
// caller, break a JSON document written from it, and be refused one turn
// later as the caller's own message: it is refused where it arrives.

#include <optional>
#include <span>

#include "nous/llm/delta.hpp"

namespace nous::llm::detail {

/// `protocol` naming the field and the byte when a string of `deltas`, or
/// `text` (a fast reader's text), is not UTF-8; nullopt when all are.
std::optional<Error> non_utf8_answer(std::span<const Delta> deltas,
                                     std::optional<std::string_view> text = std::nullopt);

}  // namespace nous::llm::detail
