#pragma once
// One message in OpenAI's chat shape (nous_llm internal): what the chat
// completions request sends, and, with our additions (reasoning, Gemini's
// thought_signature, a tool result's name and is_error), the --messages file
// shape that message_to_json writes and messages_from_json reads.

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nous/llm/chat.hpp"

namespace nous::llm::detail {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// `extensions` false: only the keys the API takes.
void write_openai_message(Writer& w, const ChatMessage& m, bool extensions);

}  // namespace nous::llm::detail
