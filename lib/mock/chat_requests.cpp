// Which provider a mock route is, and which reply a chat request asks for:
// the generic reading; each provider's fields are its ReplyFormat's (replies/).

#include "chat_requests.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "finite_numbers.hpp"
#include "replies/reply_format.hpp"
#include "structured_replies.hpp"
#include "token_counts.hpp"

namespace nous::http::mock {

std::string percent_decoded(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() &&
            std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::optional<std::string> azure_deployment(const std::string& route, std::string_view operation) {
    const std::string prefix = "/openai/deployments/";
    if (route.rfind(prefix, 0) != 0 || route.size() <= prefix.size() + operation.size() ||
        route.compare(route.size() - operation.size(), operation.size(), operation) != 0)
        return std::nullopt;
    std::string name = route.substr(prefix.size(), route.size() - prefix.size() - operation.size());
    if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
    return name;
}

std::optional<ChatRoute> chat_route(const std::string& method, const std::string& route) {
    if (method != "POST") return std::nullopt;
    // Azure OpenAI: the v1 API under /openai/v1, and the deployments form
    // (the deployment's name is the model).
    if (route == "/openai/v1/chat/completions") return ChatRoute{Format::openai, "", false};
    if (route == "/openai/v1/responses") return ChatRoute{Format::responses, "", false};
    if (auto deployment = azure_deployment(route, "/chat/completions"))
        return ChatRoute{Format::openai, *deployment, false};
    if (route == "/v1/chat/completions") return ChatRoute{Format::openai, "", false};
    if (route == "/v1/messages") return ChatRoute{Format::anthropic, "", false};
    if (route == "/v1/responses") return ChatRoute{Format::responses, "", false};
    // Bedrock: /model/{modelId}/converse and /converse-stream (the id percent-encoded).
    const std::string bedrock = "/model/";
    if (route.rfind(bedrock, 0) == 0) {
        const auto slash = route.find('/', bedrock.size());
        if (slash == std::string::npos) return std::nullopt;
        const std::string operation = route.substr(slash);
        if (operation != "/converse" && operation != "/converse-stream") return std::nullopt;
        return ChatRoute{Format::bedrock,
                         percent_decoded(route.substr(bedrock.size(), slash - bedrock.size())),
                         operation == "/converse-stream"};
    }
    // Vertex AI: /v1/projects/P/locations/L/publishers/{google,anthropic}/models/M:OPERATION.
    if (route.rfind("/v1/projects/", 0) == 0) {
        const auto publishers = route.find("/publishers/");
        const auto models =
            route.find("/models/", publishers == std::string::npos ? 0 : publishers);
        const auto colon = route.rfind(':');
        if (publishers == std::string::npos || models == std::string::npos ||
            colon == std::string::npos || colon < models)
            return std::nullopt;
        const std::string publisher = route.substr(publishers + 12, models - publishers - 12);
        const std::string model = route.substr(models + 8, colon - models - 8);
        const std::string operation = route.substr(colon + 1);
        if (publisher == "google" &&
            (operation == "generateContent" || operation == "streamGenerateContent"))
            return ChatRoute{Format::gemini, model, operation == "streamGenerateContent"};
        if (publisher == "anthropic" && model != "count-tokens" &&
            (operation == "rawPredict" || operation == "streamRawPredict"))
            return ChatRoute{Format::anthropic, model, false};  // streamed by the body's "stream"
        return std::nullopt;
    }
    const std::string gemini = "/v1beta/models/";
    if (route.rfind(gemini, 0) == 0) {
        const bool streamed = route.find(":streamGenerateContent") != std::string::npos;
        if (!streamed && route.find(":generateContent") == std::string::npos) return std::nullopt;
        const std::string rest = route.substr(gemini.size());
        return ChatRoute{Format::gemini, rest.substr(0, rest.find(':')), streamed};
    }
    return std::nullopt;
}

const char* request_body_problem(const MockRequest& request, rapidjson::Document& doc) {
    // JSON is UTF-8: a provider refuses a body that is not, and so does the mock.
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(
        request.body.c_str(), request.body.size());
    if (doc.GetParseError() == rapidjson::kParseErrorStringInvalidEncoding)
        return "request body is not UTF-8";
    if (doc.HasParseError() || !doc.IsObject()) return "request body is not a JSON object";
    if (!numbers_finite(doc)) return "request body holds a number outside the range of a double";
    return nullptr;
}

bool read_json_object(const MockRequest& request, rapidjson::Document& doc, MockResponse& error) {
    const char* why = request_body_problem(request, doc);
    if (!why) return true;
    error.status = 400;
    error.body =
        std::string(R"({"error":{"message":")") + why + R"(","type":"invalid_request_error"}})";
    return false;
}

bool read_chat(const ChatRoute& route, const MockRequest& request, const MockServerOptions& options,
               Fault fault, bool& stream, Reply& reply, MockResponse& error) {
    const Format format = route.format;
    const std::string& path_model = route.path_model;
    rapidjson::Document doc;
    if (!read_json_object(request, doc, error)) return false;
    const ReplyFormat& replies = reply_format(format);
    stream = replies.streamed(doc, route.stream_by_url);
    reply.model = path_model.empty() ? "mock-1" : path_model;
    if (auto m = doc.FindMember("model"); m != doc.MemberEnd() && m->value.IsString())
        reply.model = m->value.GetString();
    reply.tokens = options.stream_tokens;
    reply.prompt_tokens = static_cast<int>(input_tokens_of(doc));  // what its count answers
    // A tool call when the request offers tools: the first one is called.
    reply.tool_name = replies.first_tool(doc);
    if (reply.tool_name.empty()) reply.tool_name = options.tool_call;
    if (replies.holds_tool_result(doc)) reply.tool_name.clear();  // never the same call again
    reply.reasoning = replies.asks_reasoning(doc);
    if (auto refused = replies.refusal_of(doc)) {
        error.status = 400;
        error.body = std::move(*refused);
        if (format == Format::bedrock)
            error.headers.emplace_back("x-amzn-ErrorType",
                                       bedrock_error_type("ValidationException"));
        return false;
    }
    reply.include_usage = replies.includes_usage(doc);
    if (auto cannot = shape_reply(format, doc, fault, reply)) {
        error.status = 400;
        error.body = R"({"error":{"message":)" + json_string(*cannot) +
                     R"(,"type":"invalid_request_error"}})";
        return false;
    }
    return true;
}

}  // namespace nous::http::mock
