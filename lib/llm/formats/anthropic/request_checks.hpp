#pragma once
// What Anthropic's Messages API refuses of a request beyond the checks every
// format shares (nous_llm internal): each answered by the API with a 400,
// each refused here before a byte, naming the field or the message, in
// `format`'s name (Vertex AI's Claude speaks the same format). docs/llm.md.

#include <optional>
#include <string_view>

#include "formats/wire_format.hpp"

namespace nous::llm::detail {

/// The anthropic-version a request is sent with: its own, else 2023-06-01.
std::string_view anthropic_version_of(const ChatRequest& request);
/// The version is a date, YYYY-MM-DD; from 2026-10-21 on, the request type
/// has no temperature or top_p (the current SDK's), and a request that sets
/// them is refused, as any field a provider does not take.
std::optional<Error> version_check(const ChatRequest& request, const WireFormat& format);
/// A text block of whitespace alone ("text content blocks must contain
/// non-whitespace text") and a final assistant turn, a prefill, whose text
/// ends in whitespace ("final assistant content cannot end with trailing
/// whitespace"). The text is the caller's: it is never trimmed.
std::optional<Error> whitespace_check(const ChatRequest& r, const WireFormat& format);
/// With thinking on, Claude takes a temperature of 1 only, a top_p from 0.95
/// to 1, and no tool choice that forces a call (the mock refuses them too).
std::optional<Error> thinking_check(const ChatRequest& r, const WireFormat& format);
/// An image given as data whose type is not one of the four its source
/// takes: jpeg, png, gif, webp (the SDK's Base64ImageSource).
std::optional<Error> image_type_check(const ChatRequest& request, const WireFormat& format);

}  // namespace nous::llm::detail
