#pragma once
// What the four formats' request builders share (nous_llm internal): JSON
// writing helpers, the conversation read as turns, the system prompt joined,
// a tool result's function name, reasoning effort as each provider names it.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/schema_dialects.hpp"
#include "formats/wire_format.hpp"

namespace nous::llm::detail {

void string(Writer& w, std::string_view s);
void key_string(Writer& w, const char* key, std::string_view value);
/// Writes a parsed JSON value.
void raw_json(Writer& w, const rapidjson::Value& value);
/// A tool call's arguments as a JSON object (Anthropic's `input`, Gemini's
/// `args`): the text parsed, the empty object when it is empty (anything else
/// that is not an object was refused by tool_arguments_check).
void arguments_object(Writer& w, const std::string& arguments);
/// For the formats that take a tool call's input as an object: a call in the
/// conversation whose arguments are neither empty nor a JSON object (a
/// model's cut-off text, a number past a double's range) is refused, never
/// sent as `{}` in the model's name.
std::optional<Error> tool_arguments_check(const ChatRequest& request, const WireFormat& format);
/// For the formats that put the model in the URL's path (Gemini, Vertex AI):
/// a model that is not one path segment of A-Z a-z 0-9 - . _ ~ @ (a "/",
/// "?", "#", "%", ":", a space, a dot segment) is refused: it would send the
/// request, with its key, elsewhere on the provider's host.
std::optional<Error> model_in_path_check(const std::string& model, std::string_view format_name);
/// {"type"?, "name", "description"?, <schema_key>: schema, "strict"?}: a
/// tool in any of the formats; `has_strict`: the format has the field, and
/// it is written, true or false.
void tool_object(Writer& w, const ToolSpec& tool, const rapidjson::Value& schema,
                 const char* schema_key, const char* type = nullptr, bool has_strict = false,
                 bool type_said = false);
/// A tool's schema with its type said: `"type":"object"` first when it has
/// none. A tool's arguments are an object in every format (a schema with
/// another type is refused), and Anthropic's InputSchema requires the type,
/// so `{}` (OpenAI's "no parameters") means the same said this way.
void typed_tool_schema(Writer& w, const rapidjson::Value& schema);
/// What a provider takes as a tool's name, from its own definition:
/// - openai: 1 to 64 of A-Z a-z 0-9 _ - (the OpenAI SDK's FunctionDefinition,
///   both APIs);
/// - anthropic: 1 to 128 of the same (the API's ^[a-zA-Z0-9_-]{1,128}$);
/// - gemini: 1 to 64 of A-Z a-z 0-9 _ . : -, starting with a letter or _
///   (the Gen AI SDK's FunctionDeclaration);
/// - bedrock: 1 to 64 of A-Z a-z 0-9 _ - (the service model's ToolName),
///   for the conversation's tool calls too (Converse checks toolUse.name).
enum class ToolNameRule { openai, anthropic, gemini, bedrock };
/// Each tool's name by the format's rule (a name the provider would refuse
/// with a 400 is refused before sending, naming the tool and the rule); then
/// the tools marked strict: refused where the format has no strict
/// (`strict_break` nullptr), else each schema in the format's strict dialect.
std::optional<Error> tools_check(
    const ChatRequest& request, const RequestJson& parsed, const WireFormat& format,
    ToolNameRule names,
    std::optional<DialectBreak> (*strict_break)(const rapidjson::Value& schema));
/// Only `keep`'s members of `body` stay (a counter's request type takes fewer).
void keep_members(rapidjson::Document& body, std::initializer_list<std::string_view> keep);
/// An integer member of a counter's answer.
std::optional<std::int64_t> count_member(const rapidjson::Value& root, const char* name);

/// A message's text for a place that takes one string (a system slot, a
/// tool's result, the Responses API's assistant text): its content, then
/// its text parts, as one text.
std::string text_of(const ChatMessage& m);
/// The system prompt: the request's, then every system message's text
/// (text_of), one paragraph each (for the formats with one system slot).
std::string joined_system(const ChatRequest& r);
/// The image as a URL: itself, or a data: URL of its bytes.
std::string image_url_of(const ContentPart& part);
/// The name of the function a tool result answers: its own, or the call's
/// with that id earlier in the conversation.
std::string tool_name_for(const ChatRequest& r, const ChatMessage& result);
/// An array of strings (stop sequences).
void string_array(Writer& w, const std::vector<std::string>& items);
/// invalid_argument: "FIELD is not supported by PROVIDER", before any byte.
Error unsupported(std::string_view field, const WireFormat& format);
/// invalid_argument for a response schema breaking `format`'s dialect.
Error schema_refused(const std::string& why, const WireFormat& format);

/// "auto", "none", "required" (the OpenAI formats' words; not for named).
std::string_view tool_choice_word(ToolChoice::Mode mode);
/// Where the two OpenAI formats differ in spelling the same field: a named
/// tool's name and a schema's name sit in a nested object (chat
/// completions: `function`, `json_schema`) or beside `type` (Responses).
enum class OpenAIShape { chat, responses };
/// `tool_choice` and `parallel_tool_calls`, when the request sets them.
void write_openai_tool_choice(Writer& w, const ChatRequest& r, OpenAIShape shape);
/// A response format's object: {"type":"json_object"} or the json_schema one.
void write_openai_format(Writer& w, const ResponseFormat& format, const RequestJson& parsed,
                         OpenAIShape shape);
/// Both OpenAI formats: strict tools and, in strict mode, the response
/// schema in the strict dialect; an image's detail one of theirs.
std::optional<Error> openai_request_check(const ChatRequest& request, const RequestJson& parsed,
                                          const WireFormat& format);

/// Anthropic's and Gemini's thinking budgets: 1024, 4096, 16384 tokens.
int thinking_budget(ReasoningEffort effort);
/// "low", "medium", "high".
std::string_view effort_name(ReasoningEffort effort);

/// The conversation as turns that alternate between the user (user messages
/// and tool results) and the model (`model_role`), for the formats that
/// require alternation: consecutive messages of one side are one turn, in
/// order. System messages are not turns (those formats have a system slot).
template <typename Turn>
void for_each_turn(const ChatRequest& r, std::string_view model_role, Turn&& turn_out) {
    std::vector<const ChatMessage*> turn;
    std::string_view turn_role;
    for (const ChatMessage& m : r.messages) {
        if (m.role == "system") continue;
        const std::string_view role = m.role == "assistant" ? model_role : "user";
        if (role != turn_role && !turn.empty()) {
            turn_out(turn_role, turn);
            turn.clear();
        }
        turn_role = role;
        turn.push_back(&m);
    }
    if (!turn.empty()) turn_out(turn_role, turn);
}

/// Whether `word` is 1 to `max_size` bytes of A-Z a-z 0-9 _ - and `also`:
/// the providers' rule for tool names and call ids, each its own size and `also`.
bool word_fits(std::string_view word, std::size_t max_size, std::string_view also);

/// What a format takes as a tool call's id (on the call and on its result):
/// at most `max_length` bytes, and unless `any_byte` a word_fits() word of
/// A-Z a-z 0-9 _ - and `also`.
struct ToolIdRule {
    std::size_t max_length;
    bool any_byte;
    std::string_view also;
};
/// OpenAI chat: 40 bytes ("string too long. Expected a string with maximum
/// length 40"); Responses: 64; Anthropic: ^[a-zA-Z0-9_-]+$; Bedrock: the
/// service model's ToolUseId, [a-zA-Z0-9_.:-]{1,64}.
inline constexpr ToolIdRule kOpenAIChatIds{40, true, ""};
inline constexpr ToolIdRule kResponsesIds{64, true, ""};
inline constexpr ToolIdRule kAnthropicIds{static_cast<std::size_t>(-1), false, ""};
inline constexpr ToolIdRule kBedrockIds{64, false, ".:"};
/// `id` as a format takes it: itself when it fits `rule`, else "call_" and
/// the 16 hex digits of its 64-bit FNV-1a hash, the same on the call and on
/// its result. A conversation begun on one provider goes on on another (a
/// router fails over across them; Gemini's calls carry our ids, "call_N_name"),
/// and an id is only the pairing of a call with its result.
std::string wire_tool_id(std::string_view id, const ToolIdRule& rule);

}  // namespace nous::llm::detail
