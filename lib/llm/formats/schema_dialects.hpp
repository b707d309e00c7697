#pragma once
// The JSON Schema dialects of the providers' structured outputs (nous_llm
// internal): a response schema a provider would refuse is found before
// anything is sent, named by the JSON pointer of its first offending node
// and the rule. Each rule and its source: docs/llm.md, "Schema dialects".

#include <rapidjson/document.h>

#include <optional>
#include <string>

namespace nous::llm::detail {

/// The first node breaking a dialect: "/properties/items/items:
/// additionalProperties must be false in strict mode".
struct DialectBreak {
    std::string pointer;
    std::string rule;
    std::string message() const { return (pointer.empty() ? "(root)" : pointer) + ": " + rule; }
};

/// OpenAI structured outputs with strict true (chat completions and the
/// Responses API).
std::optional<DialectBreak> openai_strict_break(const rapidjson::Value& schema);
/// Anthropic structured outputs (output_config.format).
std::optional<DialectBreak> anthropic_break(const rapidjson::Value& schema);
/// Gemini responseJsonSchema.
std::optional<DialectBreak> gemini_break(const rapidjson::Value& schema);

}  // namespace nous::llm::detail
