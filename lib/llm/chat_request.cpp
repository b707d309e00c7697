// Chat requests for the three formats, written with RapidJSON (every string escaped).

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <vector>

#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"

namespace nous::llm {

std::string_view to_string(Provider provider) noexcept {
    switch (provider) {
        case Provider::openai:
            return "openai";
        case Provider::anthropic:
            return "anthropic";
        case Provider::gemini:
            return "gemini";
    }
    return "openai";
}

std::optional<Provider> provider_from_name(std::string_view name) noexcept {
    if (name == "openai") return Provider::openai;
    if (name == "anthropic") return Provider::anthropic;
    if (name == "gemini") return Provider::gemini;
    return std::nullopt;
}

std::string default_base_url(Provider provider) {
    switch (provider) {
        case Provider::openai:
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

void string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

/// Writes a schema given as JSON text as a JSON value.
void raw_json(Writer& w, const rapidjson::Value& value) { value.Accept(w); }

/// {"role": role, "content": content}.
void message_object(Writer& w, std::string_view role, std::string_view content) {
    w.StartObject();
    w.Key("role");
    string(w, role);
    w.Key("content");
    string(w, content);
    w.EndObject();
}

/// {"name", "description"?, <schema_key>: schema}: a tool in any of the formats.
void tool_object(Writer& w, const ToolSpec& tool, const rapidjson::Value& schema,
                 const char* schema_key) {
    w.StartObject();
    w.Key("name");
    string(w, tool.name);
    if (!tool.description.empty()) {
        w.Key("description");
        string(w, tool.description);
    }
    w.Key(schema_key);
    raw_json(w, schema);
    w.EndObject();
}

std::string trim_slash(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base;
}

Result<std::vector<std::shared_ptr<rapidjson::Document>>> parsed_schemas(
    const ChatRequest& request) {
    std::vector<std::shared_ptr<rapidjson::Document>> schemas;
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

void openai_body(Writer& w, const ChatRequest& r,
                 const std::vector<std::shared_ptr<rapidjson::Document>>& schemas) {
    w.StartObject();
    w.Key("model");
    string(w, r.model);
    w.Key("messages");
    w.StartArray();
    if (!r.system.empty()) message_object(w, "system", r.system);
    for (const auto& m : r.messages) message_object(w, m.role, m.content);
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
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i) {
            w.StartObject();
            w.Key("type");
            w.String("function");
            w.Key("function");
            tool_object(w, r.tools[i], *schemas[i], "parameters");
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
}

void anthropic_body(Writer& w, const ChatRequest& r,
                    const std::vector<std::shared_ptr<rapidjson::Document>>& schemas) {
    w.StartObject();
    w.Key("model");
    string(w, r.model);
    w.Key("max_tokens");
    w.Int(r.max_tokens.value_or(1024));  // required by the Messages API
    if (!r.system.empty()) {
        w.Key("system");
        string(w, r.system);
    }
    w.Key("messages");
    w.StartArray();
    for (const auto& m : r.messages) message_object(w, m.role, m.content);
    w.EndArray();
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
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

void gemini_body(Writer& w, const ChatRequest& r,
                 const std::vector<std::shared_ptr<rapidjson::Document>>& schemas) {
    w.StartObject();
    w.Key("contents");
    w.StartArray();
    for (const auto& m : r.messages) {
        w.StartObject();
        w.Key("role");
        string(w, m.role == "assistant" ? std::string_view("model") : std::string_view(m.role));
        w.Key("parts");
        w.StartArray();
        w.StartObject();
        w.Key("text");
        string(w, m.content);
        w.EndObject();
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    if (!r.system.empty()) {
        w.Key("systemInstruction");
        w.StartObject();
        w.Key("parts");
        w.StartArray();
        w.StartObject();
        w.Key("text");
        string(w, r.system);
        w.EndObject();
        w.EndArray();
        w.EndObject();
    }
    if (r.max_tokens || r.temperature) {
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
