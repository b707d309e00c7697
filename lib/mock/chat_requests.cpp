// Which provider a mock route is, and which reply a chat request asks for.

#include "chat_requests.hpp"

#include <rapidjson/document.h>

#include <algorithm>

namespace nous::http::mock {

std::optional<ChatRoute> chat_route(const std::string& method, const std::string& route) {
    if (method != "POST") return std::nullopt;
    if (route == "/v1/chat/completions") return ChatRoute{Format::openai, "", false};
    if (route == "/v1/messages") return ChatRoute{Format::anthropic, "", false};
    const std::string gemini = "/v1beta/models/";
    if (route.rfind(gemini, 0) == 0) {
        const bool streamed = route.find(":streamGenerateContent") != std::string::npos;
        if (!streamed && route.find(":generateContent") == std::string::npos) return std::nullopt;
        const std::string rest = route.substr(gemini.size());
        return ChatRoute{Format::gemini, rest.substr(0, rest.find(':')), streamed};
    }
    return std::nullopt;
}

bool read_chat(const ChatRoute& route, const MockRequest& request, const MockServerOptions& options,
               bool& stream, Reply& reply, MockResponse& error) {
    const Format format = route.format;
    const std::string& path_model = route.path_model;
    rapidjson::Document doc;
    doc.Parse(request.body.c_str(), request.body.size());
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
    if (format == Format::openai) {
        auto so = doc.FindMember("stream_options");
        reply.include_usage =
            so != doc.MemberEnd() && so->value.IsObject() && so->value.HasMember("include_usage") &&
            so->value["include_usage"].IsBool() && so->value["include_usage"].GetBool();
    }
    if (format == Format::gemini)
        stream = route.stream_by_url;  // Gemini streams by URL, not by body
    return true;
}

}  // namespace nous::http::mock
