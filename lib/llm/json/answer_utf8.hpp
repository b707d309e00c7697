#pragma once
// What a provider answers is JSON, which is UTF-8 (RFC 8259 section 8.1),
// and what we send back is checked as UTF-8 before it leaves
// (chat_request.cpp). An answer's text that is not UTF-8 would reach the
// caller, break a JSON document written from it, and be refused one turn
// later as the caller's own message: it is refused where it arrives.

#include <optional>
#include <span>
#include <string_view>

#include "nous/llm/delta.hpp"

namespace nous::llm::detail {

/// The bytes of `s` OR-ed together: below 0x80 when all are ASCII.
inline unsigned char or_of_bytes(std::string_view s) noexcept {
    unsigned char all = 0;
    for (char c : s) all |= static_cast<unsigned char>(c);
    return all;
}

/// The strings a format's reader hands on, OR-ed: ASCII, nearly every
/// token's case, is told without a call (most of the fields are empty).
inline unsigned char or_of_strings(const Delta& d) noexcept {
    unsigned char all = or_of_bytes(d.text) | or_of_bytes(d.reasoning) |
                        or_of_bytes(d.reasoning_signature) | or_of_bytes(d.reasoning_id) |
                        or_of_bytes(d.reasoning_redacted) | or_of_bytes(d.refusal);
    for (const ToolCallDelta& t : d.tool_calls)
        all |= or_of_bytes(t.id) | or_of_bytes(t.name) | or_of_bytes(t.arguments) |
               or_of_bytes(t.signature);
    if (d.finish_reason) all |= or_of_bytes(*d.finish_reason);
    if (d.error) all |= or_of_bytes(*d.error);
    return all;
}

/// Whether every string `deltas` hand on, and `text` (a fast reader's
/// text), is ASCII: then they are UTF-8 and nothing more is checked.
inline bool all_ascii(std::span<const Delta> deltas, std::string_view text = {}) noexcept {
    unsigned char all = or_of_bytes(text);
    for (const Delta& d : deltas) all |= or_of_strings(d);
    return all < 0x80;
}

/// `protocol` naming the field and the byte when a string of `deltas`, or
/// `text`, is not UTF-8; nullopt when all are.
std::optional<Error> non_utf8_answer(std::span<const Delta> deltas, std::string_view text = {});

}  // namespace nous::llm::detail
