// A chat request into the HTTP call of its provider's format: the checks
// every format shares, then the format's URL, headers and body
// (formats/wire_format.hpp), then the caller's headers.

#include "formats/wire_format.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/request.hpp"

namespace nous::llm {

namespace {

std::string trim_slash(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base;
}

Result<detail::ToolSchemas> parsed_schemas(const ChatRequest& request) {
    detail::ToolSchemas schemas;
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

}  // namespace

Result<HttpCall> build_chat_call(const ChatRequest& request) {
    if (request.model.empty())
        return Error(nous::http::ErrorCode::invalid_argument, "a chat request needs a model");
    auto schemas = parsed_schemas(request);
    if (!schemas) return schemas.error();
    if (auto bad = check_messages(request)) return *bad;
    const detail::WireFormat& format = detail::wire_format(request.provider);
    const std::string base = trim_slash(
        request.base_url.empty() ? std::string(format.default_base_url()) : request.base_url);
    HttpCall call;
    call.url = format.url(request, base);
    call.headers.emplace_back("Content-Type", "application/json");
    format.add_headers(call.headers, request);
    rapidjson::StringBuffer buffer;
    detail::Writer w(buffer);
    format.write_body(w, request, schemas.value());
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
