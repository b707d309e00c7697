// A structured answer with nous_llm: the reply is JSON that a schema
// accepts, checked against the provider's schema dialect before sending and
// against the schema when it arrives; read back as a JsonValue.
//
//   structured_answer PROVIDER BASE_URL

#include <cstdlib>
#include <iostream>
#include <nous/llm/chat.hpp>

int main(int argc, char** argv) {
    if (argc < 3 || !nous::llm::provider_from_name(argv[1])) {
        std::cerr << "usage: structured_answer PROVIDER BASE_URL\n";
        return 2;
    }
    using namespace nous::llm;
    ChatRequest request;
    request.provider = *provider_from_name(argv[1]);
    request.base_url = argv[2];
    request.model = "mock-1";
    if (const char* key = std::getenv(default_api_key_env(request.provider).c_str()))
        request.api_key = key;
    request.messages.push_back(ChatMessage::user("The capital of France, and its population?"));

    ResponseFormat format;
    format.name = "city";
    format.schema = R"({"type":"object","properties":{"name":{"type":"string"},)"
                    R"("population":{"type":"integer"}},)"
                    R"("required":["name","population"],"additionalProperties":false})";
    request.response_format = format;

    auto result = run_chat(request);
    if (!result) {
        std::cerr << to_string(result.error().code) << ": " << result.error().message << "\n";
        return 1;
    }
    if (result->output_error) {  // not JSON, or JSON the schema refuses
        std::cerr << "the answer breaks the schema: " << result->output_error->message << "\n";
        return 1;
    }
    const JsonValue& city = *result->parsed;
    std::cout << "name: " << city.member("name")->to_json() << "\n"
              << "population: " << city.member("population")->number << "\n";
    return 0;
}
