// A call's prompt and answer as span attributes (otlp_content.hpp).

#include "telemetry/otlp_content.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nous::llm::detail {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void field(Writer& w, const char* name, const std::string& value) {
    w.Key(name);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void text_part(Writer& w, const std::string& text) {
    w.StartObject();
    field(w, "type", "text");
    field(w, "content", text);
    w.EndObject();
}

void tool_calls(Writer& w, const std::vector<ToolCall>& calls) {
    for (const ToolCall& c : calls) {
        w.StartObject();
        field(w, "type", "tool_call");
        field(w, "id", c.id);
        field(w, "name", c.name);
        field(w, "arguments", c.arguments);
        w.EndObject();
    }
}

void message(Writer& w, const ChatMessage& m) {
    w.StartObject();
    field(w, "role", m.role);
    w.Key("parts");
    w.StartArray();
    if (m.role == "tool") {
        w.StartObject();
        field(w, "type", "tool_call_response");
        field(w, "id", m.tool_call_id);
        field(w, "response", m.content);
        w.EndObject();
    } else if (!m.content.empty()) {
        text_part(w, m.content);
    }
    for (const ContentPart& p : m.parts) {
        if (p.kind == ContentPart::Kind::text) {
            text_part(w, p.text);
        } else if (!p.image_url.empty()) {
            w.StartObject();
            field(w, "type", "uri");
            field(w, "modality", "image");
            field(w, "uri", p.image_url);
            w.EndObject();
        }
    }
    tool_calls(w, m.tool_calls);
    w.EndArray();
    w.EndObject();
}

}  // namespace

std::string input_messages_json(const ChatRequest& request) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartArray();
    if (!request.system.empty()) message(w, ChatMessage("system", request.system));
    for (const ChatMessage& m : request.messages) message(w, m);
    w.EndArray();
    return std::string(buffer.GetString(), buffer.GetSize());
}

std::string output_messages_json(const ChatResult& result) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartArray();
    w.StartObject();
    field(w, "role", "assistant");
    w.Key("parts");
    w.StartArray();
    if (!result.text.empty()) text_part(w, result.text);
    tool_calls(w, result.tool_calls);
    w.EndArray();
    if (result.finish_reason) field(w, "finish_reason", *result.finish_reason);
    w.EndObject();
    w.EndArray();
    return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace nous::llm::detail
