// A chat completion with nous-http: one POST, the reply's text printed.
// OPENAI_BASE_URL (default https://api.openai.com/v1) and OPENAI_API_KEY
// (may be unset, e.g. for a local server) come from the environment.

#include <cstdlib>
#include <iostream>
#include <nous/http/client.hpp>
#include <nous/http/json.hpp>
#include <string>

int main() {
    const char* base = std::getenv("OPENAI_BASE_URL");
    const char* key = std::getenv("OPENAI_API_KEY");
    const std::string url =
        std::string(base ? base : "https://api.openai.com/v1") + "/chat/completions";

    nous::http::Headers headers;
    nous::http::add_bearer_auth(headers, key ? key : "");  // an empty key adds nothing
    const std::string body =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]})";

    auto result = nous::http::post(url, body, headers);
    if (!result) {
        const nous::http::Error& e = result.error();
        std::cerr << nous::http::to_string(e.code) << ": " << e.message << "\n";
        if (e.code == nous::http::ErrorCode::http_status) std::cerr << e.body << "\n";
        return 1;
    }
    auto doc = nous::http::parse_json(result->body);
    if (!doc) {
        std::cerr << "not JSON: " << doc.error().message << "\n";
        return 1;
    }
    const rapidjson::Document& reply = *doc.value();
    if (!reply.HasMember("choices") || !reply["choices"].IsArray() || reply["choices"].Empty()) {
        std::cerr << "no choices in the reply\n";
        return 1;
    }
    const auto& message = reply["choices"][0]["message"];
    if (message.HasMember("content") && message["content"].IsString())
        std::cout << message["content"].GetString() << "\n";
    return 0;
}
