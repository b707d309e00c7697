// The conversation's value types: message and part constructors, reasoning
// effort names, and the message a turn's result becomes.

#include "formats/openai_chat/openai_message.hpp"
#include "formats/request_json.hpp"
#include "json/provider_json.hpp"
#include "nous/llm/chat.hpp"

namespace nous::llm {

ContentPart ContentPart::text_part(std::string text) {
    ContentPart p;
    p.text = std::move(text);
    return p;
}

ContentPart ContentPart::image(std::string url) {
    // data:image/png;base64,AAAA: the providers that take data want it split.
    constexpr std::string_view scheme = "data:", marker = ";base64,";
    if (url.compare(0, scheme.size(), scheme) == 0) {
        const auto at = url.find(marker);
        if (at != std::string::npos)
            return image_data(url.substr(scheme.size(), at - scheme.size()),
                              url.substr(at + marker.size()));
    }
    ContentPart p;
    p.kind = Kind::image;
    p.image_url = std::move(url);
    return p;
}

ContentPart ContentPart::image_data(std::string media_type, std::string base64) {
    ContentPart p;
    p.kind = Kind::image;
    p.media_type = std::move(media_type);
    p.data = std::move(base64);
    return p;
}

ChatMessage ChatMessage::system(std::string text) {
    ChatMessage m;
    m.role = "system";
    m.content = std::move(text);
    return m;
}

ChatMessage ChatMessage::user(std::string text, std::vector<ContentPart> parts) {
    ChatMessage m;
    m.role = "user";
    m.content = std::move(text);
    m.parts = std::move(parts);
    return m;
}

ChatMessage ChatMessage::assistant(std::string text, std::vector<ToolCall> tool_calls) {
    ChatMessage m;
    m.role = "assistant";
    m.content = std::move(text);
    m.tool_calls = std::move(tool_calls);
    return m;
}

ChatMessage ChatMessage::tool_result(std::string call_id, std::string content, bool is_error) {
    ChatMessage m;
    m.role = "tool";
    m.tool_call_id = std::move(call_id);
    m.content = std::move(content);
    m.is_error = is_error;
    return m;
}

std::optional<ReasoningEffort> reasoning_effort_from_name(std::string_view name) noexcept {
    if (name == "low") return ReasoningEffort::low;
    if (name == "medium") return ReasoningEffort::medium;
    if (name == "high") return ReasoningEffort::high;
    return std::nullopt;
}

ChatMessage ChatResult::message() const {
    ChatMessage m = ChatMessage::assistant(text, tool_calls);
    m.reasoning = reasoning;
    return m;
}

}  // namespace nous::llm

// ---- the conversation as JSON (OpenAI's chat shape) ----------------------------

namespace nous::llm {

namespace {

using detail::int_member;
using detail::member;
using detail::string_member;
using detail::Value;
using detail::Writer;

void put(Writer& w, const char* key, std::string_view value) {
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

Error bad_message(std::size_t i, const std::string& why) {
    return Error(nous::http::ErrorCode::invalid_argument,
                 "message " + std::to_string(i) + ": " + why);
}

/// A message's content: a string, null, or an array of text and image parts.
std::optional<std::string> read_content(const Value& content, ChatMessage& m) {
    if (content.IsNull()) return std::nullopt;
    if (content.IsString()) {
        m.content.assign(content.GetString(), content.GetStringLength());
        return std::nullopt;
    }
    if (!content.IsArray()) return "content must be a string, an array of parts or null";
    bool first_text = true;
    for (const Value& part : content.GetArray()) {
        const auto type = string_member(part, "type").value_or("");
        if (type == "text") {
            auto text = string_member(part, "text").value_or("");
            // The first text part is the message's text; later ones are parts.
            if (first_text && m.parts.empty())
                m.content = std::move(text);
            else
                m.parts.push_back(ContentPart::text_part(std::move(text)));
            first_text = false;
        } else if (type == "image_url") {
            const Value* image = member(part, "image_url");
            std::optional<std::string> url = image ? string_member(*image, "url") : std::nullopt;
            if (!url && image && image->IsString()) url = image->GetString();
            if (!url || url->empty()) return "an image_url part needs image_url.url";
            m.parts.push_back(ContentPart::image(std::move(*url)));
            if (image && image->IsObject())
                m.parts.back().detail = string_member(*image, "detail").value_or("");
        } else {
            return "unknown content part type '" + type + "'";
        }
    }
    return std::nullopt;
}

}  // namespace

Result<std::vector<ChatMessage>> messages_from_json(std::string_view json) {
    auto doc = nous::http::parse_json(json);
    if (!doc)
        return Error(nous::http::ErrorCode::invalid_argument, "messages: " + doc.error().message);
    const Value& root = *doc.value();
    if (!root.IsArray())
        return Error(nous::http::ErrorCode::invalid_argument, "messages: not a JSON array");
    std::vector<ChatMessage> out;
    for (std::size_t i = 0; i < root.Size(); ++i) {
        const Value& v = root[static_cast<rapidjson::SizeType>(i)];
        if (!v.IsObject()) return bad_message(i, "not a JSON object");
        ChatMessage m;
        m.role = string_member(v, "role").value_or("");
        if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool")
            return bad_message(i, "role must be system, user, assistant or tool");
        if (const Value* content = member(v, "content"))
            if (auto why = read_content(*content, m)) return bad_message(i, *why);
        if (const Value* calls = member(v, "tool_calls"); calls && calls->IsArray()) {
            for (const Value& c : calls->GetArray()) {
                ToolCall call;
                call.id = string_member(c, "id").value_or("");
                if (const Value* fn = member(c, "function")) {
                    call.name = string_member(*fn, "name").value_or("");
                    call.arguments = string_member(*fn, "arguments").value_or("{}");
                }
                call.signature = string_member(c, "thought_signature").value_or("");
                if (call.name.empty()) return bad_message(i, "a tool call needs function.name");
                m.tool_calls.push_back(std::move(call));
            }
        }
        if (const Value* r = member(v, "reasoning"); r && r->IsObject()) {
            m.reasoning.text = string_member(*r, "text").value_or("");
            m.reasoning.signature = string_member(*r, "signature").value_or("");
            m.reasoning.id = string_member(*r, "id").value_or("");
            if (const Value* redacted = member(*r, "redacted"); redacted && redacted->IsArray())
                for (const Value& block : redacted->GetArray()) {
                    if (!block.IsString())
                        return bad_message(i, "reasoning.redacted holds strings only");
                    m.reasoning.redacted.emplace_back(block.GetString(), block.GetStringLength());
                }
        }
        m.tool_call_id = string_member(v, "tool_call_id").value_or("");
        m.tool_name = string_member(v, "name").value_or("");
        if (const Value* e = member(v, "is_error"); e && e->IsBool()) m.is_error = e->GetBool();
        if (m.role == "tool" && m.tool_call_id.empty())
            return bad_message(i, "a tool message needs tool_call_id");
        out.push_back(std::move(m));
    }
    return out;
}

std::string message_to_json(const ChatMessage& m) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    detail::write_openai_message(w, m, /*extensions=*/true);
    return std::string(buffer.GetString(), buffer.GetSize());
}

namespace detail {

void write_openai_message(Writer& w, const ChatMessage& m, bool extensions) {
    w.StartObject();
    put(w, "role", m.role);
    w.Key("content");
    if (!m.parts.empty()) {
        w.StartArray();
        // The file shape writes an empty text too when a text part follows,
        // so that reading it back keeps that part a part.
        if (!m.content.empty() || (extensions && m.parts.front().kind == ContentPart::Kind::text)) {
            w.StartObject();
            put(w, "type", "text");
            put(w, "text", m.content);
            w.EndObject();
        }
        for (const ContentPart& part : m.parts) {
            w.StartObject();
            if (part.kind == ContentPart::Kind::text) {
                put(w, "type", "text");
                put(w, "text", part.text);
            } else {
                put(w, "type", "image_url");
                w.Key("image_url");
                w.StartObject();
                put(w, "url",
                    part.image_url.empty() ? "data:" + part.media_type + ";base64," + part.data
                                           : part.image_url);
                if (!part.detail.empty()) put(w, "detail", part.detail);
                w.EndObject();
            }
            w.EndObject();
        }
        w.EndArray();
    } else if (m.role == "assistant" && m.content.empty() && !m.tool_calls.empty()) {
        w.Null();  // as OpenAI writes an assistant message that only calls tools
    } else {
        w.String(m.content.data(), static_cast<rapidjson::SizeType>(m.content.size()));
    }
    // The file shape keeps the ids as they are; the wire takes OpenAI's (formats/request_json.hpp).
    auto id_of = [&](const std::string& id) {
        return extensions ? id : detail::wire_tool_id(id, detail::kOpenAIChatIds);
    };
    if (m.role == "tool") put(w, "tool_call_id", id_of(m.tool_call_id));
    if (!m.tool_calls.empty()) {
        w.Key("tool_calls");
        w.StartArray();
        for (const ToolCall& call : m.tool_calls) {
            w.StartObject();
            put(w, "id", id_of(call.id));
            put(w, "type", "function");
            w.Key("function");
            w.StartObject();
            put(w, "name", call.name);
            put(w, "arguments", call.arguments.empty() ? "{}" : call.arguments);
            w.EndObject();
            if (extensions && !call.signature.empty()) put(w, "thought_signature", call.signature);
            w.EndObject();
        }
        w.EndArray();
    }
    if (!extensions) {
        w.EndObject();
        return;
    }
    if (!m.reasoning.empty()) {
        w.Key("reasoning");
        w.StartObject();
        put(w, "text", m.reasoning.text);
        if (!m.reasoning.signature.empty()) put(w, "signature", m.reasoning.signature);
        if (!m.reasoning.id.empty()) put(w, "id", m.reasoning.id);
        if (!m.reasoning.redacted.empty()) {
            w.Key("redacted");
            w.StartArray();
            for (const std::string& block : m.reasoning.redacted)
                w.String(block.data(), static_cast<rapidjson::SizeType>(block.size()));
            w.EndArray();
        }
        w.EndObject();
    }
    if (m.role == "tool") {
        if (!m.tool_name.empty()) put(w, "name", m.tool_name);
        if (m.is_error) {
            w.Key("is_error");
            w.Bool(true);
        }
    }
    w.EndObject();
}

}  // namespace detail

Result<std::vector<ToolSpec>> tools_from_json(std::string_view json) {
    auto doc = nous::http::parse_json(json);
    if (!doc)
        return Error(nous::http::ErrorCode::invalid_argument, "tools: " + doc.error().message);
    const Value& root = *doc.value();
    if (!root.IsArray())
        return Error(nous::http::ErrorCode::invalid_argument, "tools: not a JSON array");
    std::vector<ToolSpec> tools;
    for (const Value& t : root.GetArray()) {
        ToolSpec spec;
        // Also OpenAI's own wrapping, {"type":"function","function":{...}}.
        const Value* fn = member(t, "function");
        const Value& body = fn && fn->IsObject() ? *fn : t;
        spec.name = string_member(body, "name").value_or("");
        spec.description = string_member(body, "description").value_or("");
        if (const Value* params = member(body, "parameters"))
            spec.parameters_schema = detail::compact(*params);
        if (const Value* strict = member(body, "strict")) {
            if (!strict->IsBool())
                return Error(nous::http::ErrorCode::invalid_argument,
                             "tools: '" + spec.name + "': strict must be true or false");
            spec.strict = strict->GetBool();
        }
        if (spec.name.empty())
            return Error(nous::http::ErrorCode::invalid_argument, "tools: a tool needs a name");
        tools.push_back(std::move(spec));
    }
    return tools;
}

}  // namespace nous::llm
