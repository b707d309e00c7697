// Chat requests for the four formats, written with RapidJSON (every string
// escaped): each provider's mapping of the conversation (docs/llm.md,
// "Conversations").

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cctype>
#include <vector>

#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "openai_message.hpp"

namespace nous::llm {

std::string_view to_string(Provider provider) noexcept {
    switch (provider) {
        case Provider::openai:
            return "openai";
        case Provider::anthropic:
            return "anthropic";
        case Provider::gemini:
            return "gemini";
        case Provider::openai_responses:
            return "openai-responses";
    }
    return "openai";
}

std::optional<Provider> provider_from_name(std::string_view name) noexcept {
    if (name == "openai") return Provider::openai;
    if (name == "anthropic") return Provider::anthropic;
    if (name == "gemini") return Provider::gemini;
    if (name == "openai-responses") return Provider::openai_responses;
    return std::nullopt;
}

std::string default_base_url(Provider provider) {
    switch (provider) {
        case Provider::openai:
        case Provider::openai_responses:
            return "https://api.openai.com/v1";
        case Provider::anthropic:
            return "https://api.anthropic.com/v1";
        case Provider::gemini:
            return "https://generativelanguage.googleapis.com/v1beta";
    }
    return {};
}

std::string default_api_key_env(Provider provider) {
    switch (provider) {
        case Provider::openai:
        case Provider::openai_responses:
            return "OPENAI_API_KEY";
        case Provider::anthropic:
            return "ANTHROPIC_API_KEY";
        case Provider::gemini:
            return "GEMINI_API_KEY";
    }
    return {};
}

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using Schemas = std::vector<std::shared_ptr<rapidjson::Document>>;

void string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void key_string(Writer& w, const char* key, std::string_view value) {
    w.Key(key);
    string(w, value);
}

/// Writes a parsed JSON value.
void raw_json(Writer& w, const rapidjson::Value& value) { value.Accept(w); }

/// A tool call's arguments as a JSON object (Anthropic's `input`, Gemini's
/// `args`): the text parsed, the empty object when it is empty or not an object.
void arguments_object(Writer& w, const std::string& arguments) {
    auto doc = nous::http::parse_json(arguments.empty() ? "{}" : arguments);
    if (doc && doc.value()->IsObject()) {
        raw_json(w, *doc.value());
    } else {
        w.StartObject();
        w.EndObject();
    }
}

/// {"name", "description"?, <schema_key>: schema}: a tool in any of the formats.
void tool_object(Writer& w, const ToolSpec& tool, const rapidjson::Value& schema,
                 const char* schema_key, const char* type = nullptr) {
    w.StartObject();
    if (type) key_string(w, "type", type);
    key_string(w, "name", tool.name);
    if (!tool.description.empty()) key_string(w, "description", tool.description);
    w.Key(schema_key);
    raw_json(w, schema);
    w.EndObject();
}

std::string trim_slash(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base;
}

Result<Schemas> parsed_schemas(const ChatRequest& request) {
    Schemas schemas;
    for (const auto& tool : request.tools) {
        if (tool.name.empty())
            return Error(nous::http::ErrorCode::invalid_argument, "a tool needs a name");
        auto doc = nous::http::parse_json(tool.parameters_schema);
        if (!doc || !doc.value()->IsObject())
            return Error(nous::http::ErrorCode::invalid_argument,
                         "tool '" + tool.name + "': parameters_schema is not a JSON object");
        schemas.push_back(doc.value());
    }
    return schemas;
}

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

/// Roles the builders know, and what each needs.
std::optional<Error> check_messages(const ChatRequest& r) {
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
        const ChatMessage& m = r.messages[i];
        const std::string at = "message " + std::to_string(i) + ": ";
        if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool")
            return invalid(at + "role must be system, user, assistant or tool, not '" + m.role +
                           "'");
        if (m.role == "tool" && m.tool_call_id.empty())
            return invalid(at + "a tool result needs the tool_call_id it answers");
        for (const ContentPart& part : m.parts)
            if (part.kind == ContentPart::Kind::image && part.image_url.empty() &&
                (part.data.empty() || part.media_type.empty()))
                return invalid(at + "an image needs a URL, or data with its media type");
        for (const ToolCall& call : m.tool_calls)
            if (call.name.empty()) return invalid(at + "a tool call needs a name");
    }
    return std::nullopt;
}

/// The system prompt: the request's, then every system message's, one
/// paragraph each (for the formats with one system slot).
std::string joined_system(const ChatRequest& r) {
    std::string out = r.system;
    for (const ChatMessage& m : r.messages)
        if (m.role == "system" && !m.content.empty())
            out += (out.empty() ? "" : "\n\n") + m.content;
    return out;
}

/// The image as a URL: itself, or a data: URL of its bytes.
std::string image_url_of(const ContentPart& part) {
    return part.image_url.empty() ? "data:" + part.media_type + ";base64," + part.data
                                  : part.image_url;
}

/// The name of the function a tool result answers: its own, or the call's
/// with that id earlier in the conversation.
std::string tool_name_for(const ChatRequest& r, const ChatMessage& result) {
    if (!result.tool_name.empty()) return result.tool_name;
    // The latest call with that id before the result (ids may repeat across turns).
    const ChatMessage* at = &result;
    const ChatMessage* first = r.messages.data();
    for (const ChatMessage* m = at; m-- != first;)
        for (const ToolCall& call : m->tool_calls)
            if (call.id == result.tool_call_id) return call.name;
    return result.tool_call_id;
}

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

int thinking_budget(ReasoningEffort effort) {
    switch (effort) {
        case ReasoningEffort::low:
            return 1024;
        case ReasoningEffort::medium:
            return 4096;
        case ReasoningEffort::high:
            return 16384;
    }
    return 1024;
}

std::string_view effort_name(ReasoningEffort effort) {
    switch (effort) {
        case ReasoningEffort::low:
            return "low";
        case ReasoningEffort::medium:
            return "medium";
        case ReasoningEffort::high:
            return "high";
    }
    return "low";
}

// ---- OpenAI chat completions ---------------------------------------------------
// system/user/assistant/tool roles as they are; an assistant's calls in
// `tool_calls`, a result as role "tool" with `tool_call_id`; parts as
// text / image_url. Reasoning is not sent back (the API takes none).

void openai_body(Writer& w, const ChatRequest& r, const Schemas& schemas) {
    w.StartObject();
    key_string(w, "model", r.model);
    w.Key("messages");
    w.StartArray();
    // As the API takes them: none of message_to_json's additions.
    if (!r.system.empty()) detail::write_openai_message(w, ChatMessage::system(r.system), false);
    for (const auto& m : r.messages) detail::write_openai_message(w, m, false);
    w.EndArray();
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
        w.Key("stream_options");
        w.StartObject();
        w.Key("include_usage");
        w.Bool(true);
        w.EndObject();
    }
    if (r.max_tokens) {
        w.Key("max_tokens");
        w.Int(*r.max_tokens);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) key_string(w, "reasoning_effort", effort_name(*r.reasoning_effort));
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i) {
            w.StartObject();
            key_string(w, "type", "function");
            w.Key("function");
            tool_object(w, r.tools[i], *schemas[i], "parameters");
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
}

// ---- OpenAI Responses API --------------------------------------------------------
// `instructions` for the system prompt; input items: messages (input_text /
// input_image parts), an assistant's reasoning item (when it has an id or
// encrypted content), its text, its `function_call`s, and each result as
// `function_call_output`.

void responses_input(Writer& w, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        key_string(w, "type", "function_call_output");
        key_string(w, "call_id", m.tool_call_id);
        key_string(w, "output", m.content);
        w.EndObject();
        return;
    }
    if (m.role == "assistant") {
        if (!m.reasoning.id.empty() || !m.reasoning.signature.empty()) {
            w.StartObject();
            key_string(w, "type", "reasoning");
            if (!m.reasoning.id.empty()) key_string(w, "id", m.reasoning.id);
            w.Key("summary");
            w.StartArray();
            if (!m.reasoning.text.empty()) {
                w.StartObject();
                key_string(w, "type", "summary_text");
                key_string(w, "text", m.reasoning.text);
                w.EndObject();
            }
            w.EndArray();
            if (!m.reasoning.signature.empty())
                key_string(w, "encrypted_content", m.reasoning.signature);
            w.EndObject();
        }
        if (!m.content.empty()) {
            w.StartObject();
            key_string(w, "role", "assistant");
            key_string(w, "content", m.content);
            w.EndObject();
        }
        for (const ToolCall& call : m.tool_calls) {
            w.StartObject();
            key_string(w, "type", "function_call");
            key_string(w, "call_id", call.id);
            key_string(w, "name", call.name);
            key_string(w, "arguments", call.arguments.empty() ? "{}" : call.arguments);
            w.EndObject();
        }
        return;
    }
    w.StartObject();
    key_string(w, "role", m.role);
    w.Key("content");
    if (m.parts.empty()) {
        string(w, m.content);
    } else {
        w.StartArray();
        if (!m.content.empty()) {
            w.StartObject();
            key_string(w, "type", "input_text");
            key_string(w, "text", m.content);
            w.EndObject();
        }
        for (const ContentPart& part : m.parts) {
            w.StartObject();
            if (part.kind == ContentPart::Kind::text) {
                key_string(w, "type", "input_text");
                key_string(w, "text", part.text);
            } else {
                key_string(w, "type", "input_image");
                key_string(w, "image_url", image_url_of(part));
            }
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
}

void responses_body(Writer& w, const ChatRequest& r, const Schemas& schemas) {
    w.StartObject();
    key_string(w, "model", r.model);
    if (!r.system.empty()) key_string(w, "instructions", r.system);
    w.Key("input");
    w.StartArray();
    for (const auto& m : r.messages) responses_input(w, m);
    w.EndArray();
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    if (r.max_tokens) {
        w.Key("max_output_tokens");
        w.Int(*r.max_tokens);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) {
        w.Key("reasoning");
        w.StartObject();
        key_string(w, "effort", effort_name(*r.reasoning_effort));
        key_string(w, "summary", "auto");  // the reasoning's text, summarised
        w.EndObject();
        // The reasoning comes back encrypted, so that the next turn can send it
        // without server-side storage.
        w.Key("include");
        w.StartArray();
        string(w, "reasoning.encrypted_content");
        w.EndArray();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            tool_object(w, r.tools[i], *schemas[i], "parameters", "function");
        w.EndArray();
    }
    w.EndObject();
}

// ---- Anthropic Messages ------------------------------------------------------------
// One `system`; turns alternate user / assistant, so consecutive messages of
// one role (tool results count as user) are merged into one turn, in order:
// results, then the user's text that follows them. An assistant turn: its
// thinking block (with the signature; required before tool_use when
// thinking is on), text, tool_use blocks.

/// The blocks one message adds to its turn.
void anthropic_blocks(Writer& w, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        key_string(w, "type", "tool_result");
        key_string(w, "tool_use_id", m.tool_call_id);
        key_string(w, "content", m.content);
        if (m.is_error) {
            w.Key("is_error");
            w.Bool(true);
        }
        w.EndObject();
        return;
    }
    if (m.role == "assistant" && !m.reasoning.signature.empty()) {
        w.StartObject();
        key_string(w, "type", "thinking");
        key_string(w, "thinking", m.reasoning.text);
        key_string(w, "signature", m.reasoning.signature);
        w.EndObject();
    }
    if (!m.content.empty()) {
        w.StartObject();
        key_string(w, "type", "text");
        key_string(w, "text", m.content);
        w.EndObject();
    }
    for (const ContentPart& part : m.parts) {
        w.StartObject();
        if (part.kind == ContentPart::Kind::text) {
            key_string(w, "type", "text");
            key_string(w, "text", part.text);
        } else {
            key_string(w, "type", "image");
            w.Key("source");
            w.StartObject();
            if (part.image_url.empty()) {
                key_string(w, "type", "base64");
                key_string(w, "media_type", part.media_type);
                key_string(w, "data", part.data);
            } else {
                key_string(w, "type", "url");
                key_string(w, "url", part.image_url);
            }
            w.EndObject();
        }
        w.EndObject();
    }
    for (const ToolCall& call : m.tool_calls) {
        w.StartObject();
        key_string(w, "type", "tool_use");
        key_string(w, "id", call.id);
        key_string(w, "name", call.name);
        w.Key("input");
        arguments_object(w, call.arguments);
        w.EndObject();
    }
}

/// A message that is plain text alone is sent as a string, as the documented examples do.
bool plain_text(const ChatMessage& m) {
    return m.role != "tool" && m.parts.empty() && m.tool_calls.empty() &&
           (m.role != "assistant" || m.reasoning.signature.empty());
}

void anthropic_messages(Writer& w, const ChatRequest& r) {
    w.Key("messages");
    w.StartArray();
    for_each_turn(r, "assistant",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      w.StartObject();
                      key_string(w, "role", role);
                      w.Key("content");
                      if (turn.size() == 1 && plain_text(*turn[0])) {
                          string(w, turn[0]->content);
                      } else {
                          w.StartArray();
                          for (const ChatMessage* m : turn) anthropic_blocks(w, *m);
                          w.EndArray();
                      }
                      w.EndObject();
                  });
    w.EndArray();
}

void anthropic_body(Writer& w, const ChatRequest& r, const Schemas& schemas) {
    w.StartObject();
    key_string(w, "model", r.model);
    int max_tokens = r.max_tokens.value_or(1024);  // required by the Messages API
    if (r.reasoning_effort && max_tokens <= thinking_budget(*r.reasoning_effort))
        max_tokens = thinking_budget(*r.reasoning_effort) + r.max_tokens.value_or(1024);
    w.Key("max_tokens");
    w.Int(max_tokens);
    if (const std::string system = joined_system(r); !system.empty())
        key_string(w, "system", system);
    anthropic_messages(w, r);
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) {
        w.Key("thinking");
        w.StartObject();
        key_string(w, "type", "enabled");
        w.Key("budget_tokens");
        w.Int(thinking_budget(*r.reasoning_effort));
        w.EndObject();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            tool_object(w, r.tools[i], *schemas[i], "input_schema");
        w.EndArray();
    }
    w.EndObject();
}

// ---- Gemini generateContent --------------------------------------------------------
// Roles user / model; `systemInstruction`; a call is a functionCall part
// (its thoughtSignature beside it), a result a functionResponse part in a
// user turn; consecutive messages of one role are merged into one turn (all
// results of parallel calls in one).

/// The media type of an image URL by its extension (fileData wants one).
std::string media_type_of(const ContentPart& part) {
    if (!part.media_type.empty()) return part.media_type;
    std::string url = part.image_url.substr(0, part.image_url.find_first_of("?#"));
    for (auto& c : url) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto ends = [&](std::string_view suffix) {
        return url.size() >= suffix.size() &&
               url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends(".png")) return "image/png";
    if (ends(".webp")) return "image/webp";
    if (ends(".gif")) return "image/gif";
    return "image/jpeg";
}

void gemini_parts(Writer& w, const ChatRequest& r, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        w.Key("functionResponse");
        w.StartObject();
        key_string(w, "name", tool_name_for(r, m));
        w.Key("response");
        // An object result goes as it is; anything else is wrapped.
        auto doc = nous::http::parse_json(m.content);
        if (!m.is_error && doc && doc.value()->IsObject()) {
            raw_json(w, *doc.value());
        } else {
            w.StartObject();
            key_string(w, m.is_error ? "error" : "result", m.content);
            w.EndObject();
        }
        w.EndObject();
        w.EndObject();
        return;
    }
    if (!m.content.empty() || (m.tool_calls.empty() && m.parts.empty())) {
        w.StartObject();
        key_string(w, "text", m.content);
        if (m.role == "assistant" && !m.reasoning.signature.empty())
            key_string(w, "thoughtSignature", m.reasoning.signature);
        w.EndObject();
    }
    for (const ContentPart& part : m.parts) {
        w.StartObject();
        if (part.kind == ContentPart::Kind::text) {
            key_string(w, "text", part.text);
        } else if (part.image_url.empty()) {
            w.Key("inlineData");
            w.StartObject();
            key_string(w, "mimeType", part.media_type);
            key_string(w, "data", part.data);
            w.EndObject();
        } else {
            w.Key("fileData");
            w.StartObject();
            key_string(w, "mimeType", media_type_of(part));
            key_string(w, "fileUri", part.image_url);
            w.EndObject();
        }
        w.EndObject();
    }
    for (const ToolCall& call : m.tool_calls) {
        w.StartObject();
        w.Key("functionCall");
        w.StartObject();
        key_string(w, "name", call.name);
        w.Key("args");
        arguments_object(w, call.arguments);
        w.EndObject();
        if (!call.signature.empty()) key_string(w, "thoughtSignature", call.signature);
        w.EndObject();
    }
}

void gemini_contents(Writer& w, const ChatRequest& r) {
    w.Key("contents");
    w.StartArray();
    for_each_turn(r, "model",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      w.StartObject();
                      key_string(w, "role", role);
                      w.Key("parts");
                      w.StartArray();
                      for (const ChatMessage* m : turn) gemini_parts(w, r, *m);
                      w.EndArray();
                      w.EndObject();
                  });
    w.EndArray();
}

void gemini_body(Writer& w, const ChatRequest& r, const Schemas& schemas) {
    w.StartObject();
    gemini_contents(w, r);
    if (const std::string system = joined_system(r); !system.empty()) {
        w.Key("systemInstruction");
        w.StartObject();
        w.Key("parts");
        w.StartArray();
        w.StartObject();
        key_string(w, "text", system);
        w.EndObject();
        w.EndArray();
        w.EndObject();
    }
    if (r.max_tokens || r.temperature || r.reasoning_effort) {
        w.Key("generationConfig");
        w.StartObject();
        if (r.max_tokens) {
            w.Key("maxOutputTokens");
            w.Int(*r.max_tokens);
        }
        if (r.temperature) {
            w.Key("temperature");
            w.Double(*r.temperature);
        }
        if (r.reasoning_effort) {
            w.Key("thinkingConfig");
            w.StartObject();
            w.Key("thinkingBudget");
            w.Int(thinking_budget(*r.reasoning_effort));
            w.Key("includeThoughts");
            w.Bool(true);
            w.EndObject();
        }
        w.EndObject();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        w.StartObject();
        w.Key("functionDeclarations");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            tool_object(w, r.tools[i], *schemas[i], "parameters");
        w.EndArray();
        w.EndObject();
        w.EndArray();
    }
    w.EndObject();
}

}  // namespace

Result<HttpCall> build_chat_call(const ChatRequest& request) {
    if (request.model.empty())
        return Error(nous::http::ErrorCode::invalid_argument, "a chat request needs a model");
    auto schemas = parsed_schemas(request);
    if (!schemas) return schemas.error();
    if (auto bad = check_messages(request)) return *bad;
    const std::string base = trim_slash(
        request.base_url.empty() ? default_base_url(request.provider) : request.base_url);
    HttpCall call;
    call.headers.emplace_back("Content-Type", "application/json");
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    switch (request.provider) {
        case Provider::openai:
            call.url = base + "/chat/completions";
            nous::http::add_bearer_auth(call.headers, request.api_key);
            openai_body(w, request, schemas.value());
            break;
        case Provider::openai_responses:
            call.url = base + "/responses";
            nous::http::add_bearer_auth(call.headers, request.api_key);
            responses_body(w, request, schemas.value());
            break;
        case Provider::anthropic:
            call.url = base + "/messages";
            nous::http::add_api_key(call.headers, "x-api-key", request.api_key);
            call.headers.emplace_back("anthropic-version", "2023-06-01");
            anthropic_body(w, request, schemas.value());
            break;
        case Provider::gemini:
            call.url = base + "/models/" + request.model +
                       (request.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
            nous::http::add_api_key(call.headers, "x-goog-api-key", request.api_key);
            gemini_body(w, request, schemas.value());
            break;
    }
    call.body.assign(buffer.GetString(), buffer.GetSize());
    // The caller's headers go after ours; a name they repeat replaces ours.
    // (A plain loop variable, not a structured binding: clang 14, which builds the
    // fuzz targets, cannot capture a structured binding in a lambda.)
    for (const auto& caller_header : request.headers)
        std::erase_if(call.headers, [&](const auto& h) {
            return nous::http::header_name_equals(h.first, caller_header.first);
        });
    call.headers.insert(call.headers.end(), request.headers.begin(), request.headers.end());
    return call;
}

}  // namespace nous::llm
