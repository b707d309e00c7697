#pragma once
// The JSON shapes of `nouscli chat`: a result, a conversation in OpenAI's
// chat shape with our additions, and a tool list.

#include <string>
#include <string_view>
#include <vector>

#include "nous/llm/conversation.hpp"
#include "nous/llm/provider.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

/// The message as one JSON object: {"text":..,"tool_calls":[{"id","name","arguments"}],
/// "finish_reason":..,"usage":{"input_tokens","output_tokens","cached_input_tokens",
/// "cache_write_input_tokens","reasoning_tokens"} or
/// null,"reasoning":..,"request_id":..,"rate_limit":..,
/// "message":message_to_json(result.message())}.
std::string to_json(const ChatResult& result);

/// A conversation in OpenAI's chat shape, the `nouscli chat --messages` file:
/// [{"role","content":string|[parts]|null,"tool_calls":[{"id","type":"function",
/// "function":{"name","arguments"}}]?,"tool_call_id"?}], parts {"type":"text","text"}
/// and {"type":"image_url","image_url":{"url"}}. Our additions, so that a turn's
/// message goes back whole: "reasoning":{"text","signature","id"} on an
/// assistant message, "thought_signature" on a tool call, "is_error" and
/// "name" on a tool result. invalid_argument naming the first bad message.
Result<std::vector<ChatMessage>> messages_from_json(std::string_view json);
/// One message in that shape.
std::string message_to_json(const ChatMessage& message);
/// Tools as `nouscli chat --tools` takes them: [{"name","description","parameters"}].
Result<std::vector<ToolSpec>> tools_from_json(std::string_view json);

}  // namespace nous::llm
