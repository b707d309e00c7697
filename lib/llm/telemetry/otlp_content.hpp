#pragma once
// A call's prompt and answer as the GenAI conventions' span attributes
// (nous_llm internal): gen_ai.input.messages and gen_ai.output.messages,
// JSON text of {role, parts:[{type, ...}]}. Written only when the exporter
// was asked to capture content (OtlpSettings::capture_content).

#include <string>

#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm::detail {

/// The system prompt (role "system") and every message; images by URL only
/// (an image given as bytes is left out: its bytes are not telemetry).
std::string input_messages_json(const ChatRequest& request);
/// The answer: its text and tool calls, and its finish reason.
std::string output_messages_json(const ChatResult& result);

}  // namespace nous::llm::detail
