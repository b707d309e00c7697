// A streamed chat completion with nous-http: each token printed as it
// arrives. OPENAI_BASE_URL (default https://api.openai.com/v1) and
// OPENAI_API_KEY (may be unset) come from the environment.

#include <cstdlib>
#include <iostream>
#include <nous/http/json.hpp>
#include <nous/http/stream.hpp>
#include <string>

int main() {
    const char* base = std::getenv("OPENAI_BASE_URL");
    const char* key = std::getenv("OPENAI_API_KEY");
    const std::string url =
        std::string(base ? base : "https://api.openai.com/v1") + "/chat/completions";

    nous::http::Headers headers;
    nous::http::add_bearer_auth(headers, key ? key : "");
    const std::string body =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello"}]})";

    // Memory stays bounded however slowly this loop runs: the reader parks
    // and TCP holds the server back (Options::window_* tune it).
    nous::http::Stream stream = nous::http::stream(url, body, headers);
    for (const nous::http::StreamItem& item : stream) {
        if (item.is_done()) break;  // data: [DONE]
        if (item.is_error()) {
            std::cerr << "\n"
                      << nous::http::to_string(item.error->code) << ": " << item.error->message
                      << "\n";
            return 1;
        }
        auto chunk = nous::http::parse_json(item.event.data);
        if (!chunk) continue;  // not every provider event is JSON (comments, pings)
        const rapidjson::Document& c = *chunk.value();
        if (!c.IsObject() || !c.HasMember("choices") || !c["choices"].IsArray() ||
            c["choices"].Empty())
            continue;
        const auto& delta = c["choices"][0]["delta"];
        if (delta.IsObject() && delta.HasMember("content") && delta["content"].IsString())
            std::cout << delta["content"].GetString() << std::flush;
    }
    std::cout << "\n";
    return 0;
}
