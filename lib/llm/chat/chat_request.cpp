// A chat request into the HTTP call of its provider's format: the checks
// every format shares, then the format's URL, headers and body
// (formats/wire_format.hpp), then the caller's headers.

#include <cmath>
#include <sstream>

#include "formats/prompt_cache.hpp"
#include "formats/request_json.hpp"
#include "formats/wire_format.hpp"
#include "json/ascii.hpp"
#include "json/utf8_check.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/request.hpp"

namespace nous::llm {

namespace {

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

/// The request's JSON text parsed and checked: tool schemas, the response
/// schema, the tool choice against the tools offered.
Result<detail::RequestJson> parsed_json(const ChatRequest& request) {
    detail::RequestJson parsed;
    detail::ToolSchemas& schemas = parsed.tools;
    for (std::size_t i = 0; i < request.tools.size(); ++i) {
        const ToolSpec& tool = request.tools[i];
        if (tool.name.empty())
            return Error(nous::http::ErrorCode::invalid_argument, "a tool needs a name");
        const std::string named =
            "tool " + detail::quoted_if_printable(tool.name, "(its name unprintable)");
        // The model calls a tool by its name (and run_tools dispatches by
        // it): Anthropic answers "Tool names must be unique", Gemini
        // "Duplicate function declaration".
        for (std::size_t j = 0; j < i; ++j)
            if (request.tools[j].name == tool.name)
                return invalid(named + " is offered twice: tool names must be unique");
        auto doc = nous::http::parse_json(tool.parameters_schema);
        if (!doc || !doc.value()->IsObject())
            return invalid(named + ": parameters_schema is not a JSON object");
        // A tool's arguments are an object in every format ("schema must be a
        // JSON Schema of 'type: \"object\"'", OpenAI says).
        if (auto type = doc.value()->FindMember("type");
            type != doc.value()->MemberEnd() &&
            !(type->value.IsString() && std::string_view(type->value.GetString()) == "object"))
            return invalid(named + ": parameters_schema must be of type object");
        schemas.push_back(doc.value());
    }
    if (const auto& format = request.response_format;
        format && format->kind == ResponseFormat::Kind::json_schema) {
        auto doc = nous::http::parse_json(format->schema);
        if (!doc || !doc.value()->IsObject())
            return invalid("response_format: the schema is not a JSON object");
        if (format->name.empty()) return invalid("response_format: the schema needs a name");
        parsed.response_schema = doc.value();
    }
    if (const auto& choice = request.tool_choice) {
        if (choice->mode == ToolChoice::Mode::named) {
            bool offered = false;
            for (const auto& tool : request.tools) offered = offered || tool.name == choice->name;
            if (!offered)
                return invalid("tool_choice names '" + choice->name + "', which no tool is");
        }
        // It says how the offered tools are called, whatever its mode:
        // without tools OpenAI answers a 400 ("'tool_choice' is only allowed
        // when 'tools' are specified"), and Converse, whose toolChoice lives
        // in toolConfig beside the tools, has nowhere to write it.
        if (request.tools.empty())
            return invalid("tool_choice " + std::string(detail::tool_choice_word(choice->mode)) +
                           " needs tools");
    }
    // It says how the offered tools are called: without tools OpenAI answers
    // a 400 ("'parallel_tool_calls' is only allowed when 'tools' are specified").
    if (request.parallel_tool_calls && request.tools.empty())
        return invalid("parallel_tool_calls needs tools");
    // Not finite, a number would stop the body's writer half-way: refused here.
    if (request.temperature && !(std::isfinite(*request.temperature) && *request.temperature >= 0))
        return invalid("temperature must be a finite number, 0 or more");
    if (request.max_tokens && *request.max_tokens < 1)
        return invalid("max_tokens must be 1 or more");
    if (request.top_p && !(*request.top_p >= 0 && *request.top_p <= 1))
        return invalid("top_p must be between 0 and 1");
    // An empty stop sequence could end the answer anywhere; Bedrock's service
    // model refuses it (a NonEmptyString), and no provider gives it a meaning.
    for (std::size_t i = 0; i < request.stop.size(); ++i)
        if (request.stop[i].empty())
            return invalid("stop sequence " + std::to_string(i) + " is empty");
    return parsed;
}

/// `extra`'s members into `ours`: an object into our object of the same
/// name member by member, recursively; any other value replaces ours. The
/// recursion goes no deeper than our own body's objects.
void merge_into(rapidjson::Value& ours, const rapidjson::Value& extra,
                rapidjson::Document::AllocatorType& allocator) {
    for (const auto& m : extra.GetObject()) {
        auto it = ours.FindMember(m.name);
        if (it != ours.MemberEnd() && it->value.IsObject() && m.value.IsObject()) {
            merge_into(it->value, m.value, allocator);
            continue;
        }
        rapidjson::Value value(m.value, allocator);
        if (it != ours.MemberEnd()) {
            it->value = value;
        } else {
            rapidjson::Value name(m.name, allocator);
            ours.AddMember(name, value, allocator);
        }
    }
}

/// What goes into the format's `body` after it is written, read back as a
/// document once and only when the request has any: its cache settings
/// (the format's write_cache, docs/cost.md), then extra_body merged last
/// (docs/llm.md: objects merge recursively, `{"generationConfig":{"topK":5}}`
/// keeps our responseMimeType; any other value replaces ours).
std::optional<Error> finish_body(const detail::WireFormat& format, const ChatRequest& request,
                                 std::string& body) {
    const bool cache = detail::has_cache_settings(request);
    if (!cache && request.extra_body.empty()) return std::nullopt;
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (cache)
        if (auto bad = format.write_cache(doc, request)) return bad;
    if (!request.extra_body.empty()) {
        auto extra = nous::http::parse_json(request.extra_body);
        if (!extra || !extra.value()->IsObject())
            return invalid("extra_body must be a JSON object");
        merge_into(doc, *extra.value(), doc.GetAllocator());
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    doc.Accept(w);
    body.assign(buffer.GetString(), buffer.GetSize());
    return std::nullopt;
}

/// A temperature past the provider's range is answered with a 400 (Anthropic
/// and Bedrock take 0 to 1, the others 0 to 2): refused before a byte.
std::optional<Error> temperature_check(const ChatRequest& r, const detail::WireFormat& format) {
    const std::optional<double> most = format.max_temperature();
    if (!most || !r.temperature || *r.temperature <= *most) return std::nullopt;
    std::ostringstream message;
    message << "temperature " << *r.temperature << " is not taken by " << format.name()
            << ": it takes 0 to " << *most << " (refused before sending)";
    return invalid(message.str());
}

/// Standard base64 (RFC 4648 section 4): its alphabet, '=' only as the last
/// one or two characters, and a length a whole number of bytes makes.
bool is_base64(std::string_view data) {
    std::size_t end = data.size();
    while (end > 0 && data.size() - end < 2 && data[end - 1] == '=') --end;
    for (std::size_t i = 0; i < end; ++i) {
        const char c = data[i];
        if (!detail::ascii_alnum(c) && c != '+' && c != '/') return false;
    }
    return data.size() % 4 != 1 && (end == data.size() || data.size() % 4 == 0);
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
        for (const ContentPart& part : m.parts) {
            if (part.kind != ContentPart::Kind::image) continue;
            if (part.image_url.empty() && (part.data.empty() || part.media_type.empty()))
                return invalid(at + "an image needs a URL, or data with its media type");
            // ContentPart::image() splits a well-formed one: what is left is
            // not one, and every provider answers it with a 400.
            if (detail::ascii_lowered(std::string_view(part.image_url).substr(0, 5)) == "data:")
                return invalid(at + "an image's data: URL must be data:MEDIA_TYPE;base64,DATA");
            if (!part.data.empty() && !is_base64(part.data))
                return invalid(at + "an image's data is not base64");
        }
        for (const ToolCall& call : m.tool_calls)
            if (call.name.empty()) return invalid(at + "a tool call needs a name");
        // Only the model calls tools: no provider's request type takes a call
        // in another role's message (the Responses writer would drop it).
        if (!m.tool_calls.empty() && m.role != "assistant")
            return invalid(at + "a " + m.role +
                           " message makes no tool calls (only an assistant's does)");
    }
    return std::nullopt;
}

/// What in `r` holds text that is not UTF-8, for the error (its path only).
std::string where_not_utf8(const ChatRequest& r) {
    auto bad = [](std::string_view text) { return detail::first_invalid_utf8(text).has_value(); };
    if (bad(r.system)) return "the system prompt";
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
        const ChatMessage& m = r.messages[i];
        bool found = bad(m.content) || bad(m.tool_call_id);
        for (const ContentPart& part : m.parts) found = found || bad(part.text);
        for (const ToolCall& call : m.tool_calls)
            found = found || bad(call.id) || bad(call.name) || bad(call.arguments);
        if (found) return "message " + std::to_string(i);
    }
    for (const ToolSpec& tool : r.tools)
        if (bad(tool.name) || bad(tool.description)) return "a tool's name or description";
    return "a field of the request";
}

/// The body is JSON, which is UTF-8: text that is not would reach the
/// provider as a body it cannot parse (RapidJSON copies a string's bytes).
std::optional<Error> utf8_check(const ChatRequest& r, std::string_view body) {
    const auto at = detail::first_invalid_utf8(body);
    if (!at) return std::nullopt;
    static constexpr char hex[] = "0123456789ABCDEF";
    const auto byte = static_cast<unsigned char>(body[*at]);
    return invalid(where_not_utf8(r) + " is not UTF-8 (a byte 0x" + hex[byte >> 4] +
                   hex[byte & 15] + " that begins no UTF-8 character): send text as UTF-8");
}

}  // namespace

ToolChoice ToolChoice::from_name(std::string_view name) {
    ToolChoice choice;
    if (name == "auto") {
        choice.mode = Mode::automatic;
    } else if (name == "none") {
        choice.mode = Mode::none;
    } else if (name == "required") {
        choice.mode = Mode::required;
    } else {
        choice.mode = Mode::named;
        choice.name = std::string(name);
    }
    return choice;
}

Result<HttpCall> build_chat_call(const ChatRequest& request) {
    if (request.model.empty())
        return Error(nous::http::ErrorCode::invalid_argument, "a chat request needs a model");
    auto schemas = parsed_json(request);
    if (!schemas) return schemas.error();
    if (auto bad = check_messages(request)) return *bad;
    const detail::WireFormat& format = detail::wire_format(request.provider);
    if (auto bad = format.check(request, schemas.value())) return *bad;
    if (auto bad = temperature_check(request, format)) return *bad;
    const std::string base = detail::base_url_of(format, request.base_url);
    HttpCall call;
    call.url = format.url(request, base);
    call.headers.emplace_back("Content-Type", "application/json");
    format.add_headers(call.headers, request);
    rapidjson::StringBuffer buffer;
    detail::Writer w(buffer);
    format.write_body(w, request, schemas.value());
    call.body.assign(buffer.GetString(), buffer.GetSize());
    if (auto bad = finish_body(format, request, call.body)) return *bad;
    if (auto bad = utf8_check(request, call.body)) return *bad;
    detail::add_caller_headers(call.headers, request.headers);
    if (auto bad = format.sign(call, request)) return *bad;
    return call;
}

}  // namespace nous::llm
