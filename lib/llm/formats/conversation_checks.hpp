#pragma once
// What the providers refuse of a conversation's shape, checked before a byte
// is sent (nous_llm internal): images where a format cannot carry them, tool
// calls without their results, turns with nothing in them. Each format's
// check() calls those its provider needs. docs/llm.md lists them.

#include <optional>
#include <string_view>

#include "formats/wire_format.hpp"

namespace nous::llm::detail {

/// An image's detail: refused where the format has none, else auto, low or high.
std::optional<Error> image_detail_check(const ChatRequest& request, const WireFormat& format,
                                        bool has_detail);

/// Where a format can carry an image besides a user's message: in a
/// system message (the Responses API's input items) and in an assistant's
/// (Anthropic, Gemini and Bedrock). No format takes one in a tool result as
/// we write it (a text).
struct ImagePlaces {
    bool system;
    bool assistant;
};
/// An image in a message of a role whose format cannot carry it: refused,
/// never dropped. OpenAI's request types take text alone in system,
/// assistant and tool messages; a system slot (Anthropic, Gemini, Bedrock)
/// takes text alone.
std::optional<Error> image_place_check(const ChatRequest& request, const WireFormat& format,
                                       ImagePlaces places);

/// Every tool call answered by a result in the turn right after it, and
/// every result answering a call of the turn right before it: each provider
/// answers a gap with a 400 (OpenAI "An assistant message with 'tool_calls'
/// must be followed by tool messages responding to each 'tool_call_id'",
/// Anthropic "tool_use ids were found without tool_result blocks immediately
/// after", Gemini "the number of function response parts is equal to the
/// number of function call parts", Bedrock a ValidationException).
/// `results_may_answer_stored_calls`: the Responses API, whose calls may be
/// held on the server (`previous_response_id` through extra_body).
/// `results_first`: the results come before anything else of their turn
/// (OpenAI chat's tool messages right after the call; Anthropic's
/// tool_result blocks first in their message).
std::optional<Error> tool_pairing_check(const ChatRequest& r, bool results_may_answer_stored_calls,
                                        bool results_first);

/// Whether a format sends back a turn's redacted reasoning blocks
/// (Anthropic's `redacted_thinking`, Bedrock's `redactedContent`); Gemini has
/// no place for them. Reasoning with its signature goes back in all three,
/// and reasoning text without one in none (no provider takes it unsigned).
enum class RedactedReasoning { sent, not_sent };

/// Whether a message gives its turn anything to send: text, a part, a tool
/// call, signed reasoning or redacted reasoning the format sends; a tool
/// result always does.
bool has_content(const ChatMessage& m, RedactedReasoning redacted);
/// A conversation without a turn (a system prompt alone), or a turn
/// (for_each_turn's) with nothing in it: invalid_argument naming its first
/// message. Anthropic, Gemini and Bedrock answer either with a 400 ("all
/// messages must have non-empty content except for the optional final
/// assistant message", "an empty text parameter", "the content field in the
/// Message object ... is empty"); `final_model_turn_may_be_empty`: Anthropic's
/// exception, a final assistant turn (a prefill) may be empty.
std::optional<Error> empty_turn_check(const ChatRequest& r, const WireFormat& format,
                                      std::string_view model_role,
                                      bool final_model_turn_may_be_empty,
                                      RedactedReasoning redacted);

}  // namespace nous::llm::detail
