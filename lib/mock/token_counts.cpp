// The mock's token counters (token_counts.hpp).

#include "token_counts.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "chat_requests.hpp"

namespace nous::http::mock {

std::int64_t input_tokens_of(const rapidjson::Value& doc) {
    static constexpr std::string_view kConversation[] = {
        "messages", "system", "tools", "input", "instructions", "contents", "systemInstruction"};
    if (!doc.IsObject()) return 1;
    std::vector<const rapidjson::Value*> todo;
    const rapidjson::Value* root = &doc;
    // Gemini's count wraps the request it counts.
    if (auto wrapped = doc.FindMember("generateContentRequest");
        wrapped != doc.MemberEnd() && wrapped->value.IsObject())
        root = &wrapped->value;
    for (const auto& m : root->GetObject())
        for (std::string_view name : kConversation)
            if (name == std::string_view(m.name.GetString(), m.name.GetStringLength()))
                todo.push_back(&m.value);
    std::uint64_t bytes = 0;
    while (!todo.empty()) {  // without recursion: a request may nest deep
        const rapidjson::Value* v = todo.back();
        todo.pop_back();
        if (v->IsString()) {
            bytes += v->GetStringLength();
        } else if (v->IsArray()) {
            for (const auto& e : v->GetArray()) todo.push_back(&e);
        } else if (v->IsObject()) {
            for (const auto& m : v->GetObject()) todo.push_back(&m.value);
        }
    }
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes / 4));
}

std::optional<Format> count_route(const std::string& method, const std::string& path) {
    if (method != "POST") return std::nullopt;
    if (path == "/v1/messages/count_tokens") return Format::anthropic;
    if (path == "/v1/responses/input_tokens") return Format::responses;
    // Vertex AI: Gemini's :countTokens, Anthropic's count-tokens:rawPredict.
    if (path.rfind("/v1/projects/", 0) == 0) {
        if (path.ends_with("/publishers/anthropic/models/count-tokens:rawPredict"))
            return Format::anthropic;
        if (path.find("/publishers/google/models/") != std::string::npos &&
            path.ends_with(":countTokens"))
            return Format::gemini;
        return std::nullopt;
    }
    if (path.rfind("/model/", 0) == 0 && path.size() > 20 &&
        path.compare(path.size() - 13, 13, "/count-tokens") == 0)
        return Format::bedrock;
    const std::string gemini = "/v1beta/models/", suffix = ":countTokens";
    if (path.rfind(gemini, 0) == 0 && path.size() > gemini.size() + suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
        return Format::gemini;
    return std::nullopt;
}

void count_reply(Format format, const MockRequest& request, MockResponse& response) {
    rapidjson::Document doc;
    if (!read_json_object(request, doc, response)) return;
    const std::string n = std::to_string(input_tokens_of(doc));
    response.headers = {{"Content-Type", "application/json"}};
    switch (format) {
        case Format::anthropic:
            response.body = R"({"input_tokens":)" + n + "}";
            break;
        case Format::responses:
            response.body = R"({"object":"response.input_tokens","input_tokens":)" + n + "}";
            break;
        case Format::bedrock:
            response.body = R"({"inputTokens":)" + n + "}";
            break;
        default:  // gemini
            response.body = R"({"totalTokens":)" + n + "}";
            break;
    }
}

}  // namespace nous::http::mock
