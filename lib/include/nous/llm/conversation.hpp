#pragma once
// A conversation's value types: messages with their roles, text and image
// parts, tool calls and their results, reasoning with its signature, and the
// tools a model may call. Each provider's mapping: docs/llm.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nous::llm {

/// One part of a message's content beyond its text: more text, or an image.
struct ContentPart {
    enum class Kind { text, image };
    Kind kind = Kind::text;
    std::string text;        ///< kind text
    std::string image_url;   ///< kind image, by URL (https); empty when given as data
    std::string media_type;  ///< kind image as data: "image/png", "image/jpeg"...
    std::string data;        ///< kind image as data: the base64 bytes
    /// kind image: "auto", "low" or "high", the OpenAI formats' `detail`;
    /// empty: the provider's default (the Responses API is sent "auto", which
    /// its request type requires). Anthropic and Gemini have no such field:
    /// a detail set for them is refused.
    std::string detail;

    static ContentPart text_part(std::string text);
    /// An image by URL; a `data:MEDIA;base64,DATA` URL becomes media type and data.
    static ContentPart image(std::string url);
    static ContentPart image_data(std::string media_type, std::string base64);
};

/// A tool call the model made.
struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  ///< the call's JSON arguments as one string, as OpenAI sends them
    /// Gemini's thoughtSignature on the call's part: sent back with it on the next turn.
    std::string signature;
};

/// The model's reasoning on an assistant message, and what the provider needs
/// to accept it back: Anthropic's thinking `signature`, Gemini's
/// `thoughtSignature`, the Responses API's reasoning item (`id`,
/// `encrypted_content` as the signature).
struct Reasoning {
    std::string text;
    std::string signature;
    std::string id;  ///< Responses API: the reasoning item's id
    /// The turn's redacted reasoning blocks (Anthropic `redacted_thinking`,
    /// Bedrock `redactedContent`), each opaque data sent back as it came:
    /// both refuse a thinking turn with tool use that lacks them.
    std::vector<std::string> redacted;
    bool empty() const noexcept {
        return text.empty() && signature.empty() && id.empty() && redacted.empty();
    }
};

/// A message of the conversation. Roles: "system", "user", "assistant",
/// "tool" (a tool's result). Each provider's mapping is in docs/llm.md.
struct ChatMessage {
    ChatMessage() = default;
    /// A message of text: ChatMessage{"user", "Hello"}.
    ChatMessage(std::string role_, std::string content_)
        : role(std::move(role_)), content(std::move(content_)) {}

    std::string role;
    std::string content;  ///< the text (a tool result's content)
    /// After `content`: more text parts and images (user messages).
    std::vector<ContentPart> parts;
    std::vector<ToolCall> tool_calls;  ///< assistant: the calls it made
    Reasoning reasoning;               ///< assistant: sent back where the provider needs it
    std::string tool_call_id;          ///< tool: the id of the call this answers
    /// tool: the function's name (Gemini's functionResponse names it); when
    /// empty, taken from the call with `tool_call_id` earlier in the conversation.
    std::string tool_name;
    bool is_error = false;  ///< tool: the result reports a failure

    static ChatMessage system(std::string text);
    static ChatMessage user(std::string text, std::vector<ContentPart> parts = {});
    static ChatMessage assistant(std::string text, std::vector<ToolCall> tool_calls = {});
    static ChatMessage tool_result(std::string call_id, std::string content, bool is_error = false);
};

/// How hard a reasoning model thinks: OpenAI `reasoning_effort`, Responses
/// `reasoning.effort`, Anthropic and Gemini thinking budgets of 1024, 4096,
/// 16384 tokens.
enum class ReasoningEffort { low, medium, high };
std::optional<ReasoningEffort> reasoning_effort_from_name(std::string_view name) noexcept;

/// A tool the model may call; `parameters_schema` is a JSON Schema object as JSON text.
struct ToolSpec {
    /// As each provider takes it, checked before sending: A-Z a-z 0-9 _ -,
    /// up to 64 characters (OpenAI, Bedrock) or 128 (Anthropic); Gemini also
    /// takes . and :, up to 64, the first a letter or _.
    std::string name;
    std::string description;
    std::string parameters_schema = R"({"type":"object","properties":{}})";
    /// The provider holds the model's arguments to the schema, which must
    /// then be in the provider's strict dialect (checked before sending).
    /// Written, true or false, on every format that has the field (OpenAI
    /// chat, Responses, Anthropic: the Responses API takes a missing one as
    /// true and then refuses ordinary schemas); Gemini has none and refuses true.
    bool strict = false;
};

}  // namespace nous::llm
