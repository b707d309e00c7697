// Which provider a mock route is, and which reply a chat request asks for.

#include "chat_requests.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "structured_replies.hpp"

namespace nous::http::mock {

std::optional<ChatRoute> chat_route(const std::string& method, const std::string& route) {
    if (method != "POST") return std::nullopt;
    if (route == "/v1/chat/completions") return ChatRoute{Format::openai, "", false};
    if (route == "/v1/messages") return ChatRoute{Format::anthropic, "", false};
    if (route == "/v1/responses") return ChatRoute{Format::responses, "", false};
    const std::string gemini = "/v1beta/models/";
    if (route.rfind(gemini, 0) == 0) {
        const bool streamed = route.find(":streamGenerateContent") != std::string::npos;
        if (!streamed && route.find(":generateContent") == std::string::npos) return std::nullopt;
        const std::string rest = route.substr(gemini.size());
        return ChatRoute{Format::gemini, rest.substr(0, rest.find(':')), streamed};
    }
    return std::nullopt;
}

namespace {

bool has_member(const rapidjson::Value& v, const char* name) {
    return v.IsObject() && v.HasMember(name);
}

std::string string_of(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) return "";
    auto it = v.FindMember(name);
    return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

/// The conversation already holds a tool's result: the mock answers in text
/// then, so that an agent loop against it ends.
bool has_tool_result(Format format, const rapidjson::Value& doc) {
    const char* list = format == Format::gemini      ? "contents"
                       : format == Format::responses ? "input"
                                                     : "messages";
    if (!has_member(doc, list) || !doc[list].IsArray()) return false;
    for (const auto& m : doc[list].GetArray()) {
        if (format == Format::openai && string_of(m, "role") == "tool") return true;
        if (format == Format::responses && string_of(m, "type") == "function_call_output")
            return true;
        const char* parts = format == Format::gemini ? "parts" : "content";
        if (!has_member(m, parts) || !m[parts].IsArray()) continue;
        for (const auto& part : m[parts].GetArray()) {
            if (format == Format::anthropic && string_of(part, "type") == "tool_result")
                return true;
            if (format == Format::gemini && has_member(part, "functionResponse")) return true;
        }
    }
    return false;
}

/// The request asks for reasoning, in its provider's way.
bool asks_reasoning(Format format, const rapidjson::Value& doc) {
    switch (format) {
        case Format::openai:
            return has_member(doc, "reasoning_effort");
        case Format::responses:
            return has_member(doc, "reasoning");
        case Format::anthropic:
            return has_member(doc, "thinking") && string_of(doc["thinking"], "type") == "enabled";
        case Format::gemini:
            return has_member(doc, "generationConfig") &&
                   has_member(doc["generationConfig"], "thinkingConfig");
    }
    return false;
}

/// What the providers refuse when thinking is on and a turn's signature was
/// dropped: Anthropic wants an assistant turn with tool_use to start with its
/// signed thinking block; Gemini wants the thoughtSignature back on each
/// functionCall part. The mock refuses the same (400), so that a client that
/// loses signatures fails against it as it would in production.
std::optional<std::string> dropped_signature(Format format, const rapidjson::Value& doc) {
    if (!asks_reasoning(format, doc)) return std::nullopt;
    const char* list = format == Format::gemini ? "contents" : "messages";
    if ((format != Format::anthropic && format != Format::gemini) || !has_member(doc, list) ||
        !doc[list].IsArray())
        return std::nullopt;
    const auto& turns = doc[list];
    for (rapidjson::SizeType i = 0; i < turns.Size(); ++i) {
        const auto& turn = turns[i];
        const char* parts = format == Format::gemini ? "parts" : "content";
        if (!has_member(turn, parts) || !turn[parts].IsArray()) continue;
        const auto& blocks = turn[parts];
        for (rapidjson::SizeType j = 0; j < blocks.Size(); ++j) {
            const auto& block = blocks[j];
            if (format == Format::anthropic && string_of(block, "type") == "tool_use") {
                const auto& head = blocks[0];
                if (string_of(head, "type") != "thinking" || string_of(head, "signature").empty())
                    return "messages." + std::to_string(i) +
                           ".content.0.type: Expected `thinking` or `redacted_thinking`, but "
                           "found `" +
                           string_of(head, "type") +
                           "`. When `thinking` is enabled, an assistant message with tool_use "
                           "must start with a thinking block (with its signature)";
            }
            if (format == Format::gemini && has_member(block, "functionCall") &&
                string_of(block, "thoughtSignature").empty())
                return "Function call is missing a thought_signature in functionCall parts "
                       "(contents[" +
                       std::to_string(i) + "].parts[" + std::to_string(j) + "])";
        }
    }
    return std::nullopt;
}

}  // namespace

bool read_chat(const ChatRoute& route, const MockRequest& request, const MockServerOptions& options,
               Fault fault, bool& stream, Reply& reply, MockResponse& error) {
    const Format format = route.format;
    const std::string& path_model = route.path_model;
    rapidjson::Document doc;
    // Iterative: a client's deeply nested body cannot exhaust the
    // connection thread's stack (the recursive parser would).
    doc.Parse<rapidjson::kParseIterativeFlag>(request.body.c_str(), request.body.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        error.status = 400;
        error.body =
            R"({"error":{"message":"request body is not a JSON object","type":"invalid_request_error"}})";
        return false;
    }
    auto s = doc.FindMember("stream");
    stream = s != doc.MemberEnd() && s->value.IsBool() && s->value.GetBool();
    reply.model = path_model.empty() ? "mock-1" : path_model;
    if (auto m = doc.FindMember("model"); m != doc.MemberEnd() && m->value.IsString())
        reply.model = m->value.GetString();
    reply.tokens = options.stream_tokens;
    reply.prompt_tokens = static_cast<int>(std::max<std::size_t>(1, request.body.size() / 4));
    // A tool call when the request offers tools: the first one is called.
    if (auto tools = doc.FindMember("tools");
        tools != doc.MemberEnd() && tools->value.IsArray() && !tools->value.Empty()) {
        const auto& first = tools->value[0];
        auto name_of = [](const rapidjson::Value& v) -> std::string {
            if (v.IsObject())
                if (auto n = v.FindMember("name"); n != v.MemberEnd() && n->value.IsString())
                    return n->value.GetString();
            return "";
        };
        if (format == Format::openai && first.IsObject() && first.HasMember("function"))
            reply.tool_name = name_of(first["function"]);
        else if (format == Format::gemini && first.IsObject() &&
                 first.HasMember("functionDeclarations") &&
                 first["functionDeclarations"].IsArray() && !first["functionDeclarations"].Empty())
            reply.tool_name = name_of(first["functionDeclarations"][0]);
        else
            reply.tool_name = name_of(first);
    }
    if (reply.tool_name.empty()) reply.tool_name = options.tool_call;
    if (has_tool_result(format, doc)) reply.tool_name.clear();  // never the same call again
    reply.reasoning = asks_reasoning(format, doc);
    if (auto why = dropped_signature(format, doc)) {
        error.status = 400;
        error.body = format == Format::anthropic
                         ? R"({"type":"error","error":{"type":"invalid_request_error","message":)" +
                               json_string(*why) + "}}"
                         : R"({"error":{"code":400,"message":)" + json_string(*why) +
                               R"(,"status":"INVALID_ARGUMENT"}})";
        return false;
    }
    if (format == Format::openai) {
        auto so = doc.FindMember("stream_options");
        reply.include_usage =
            so != doc.MemberEnd() && so->value.IsObject() && so->value.HasMember("include_usage") &&
            so->value["include_usage"].IsBool() && so->value["include_usage"].GetBool();
    }
    if (format == Format::gemini)
        stream = route.stream_by_url;  // Gemini streams by URL, not by body
    shape_reply(format, doc, fault, reply);
    return true;
}

}  // namespace nous::http::mock
