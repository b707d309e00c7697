// A tool loop with nous_llm, for any of the four formats: the model asks for
// a tool, the application runs it and sends the result back, until the model
// answers in text. The turn's result becomes the message to append
// (ChatResult::message(), reasoning signatures included), so the loop is the
// same for every provider.
//
//   tool_loop PROVIDER BASE_URL      PROVIDER: openai, openai-responses, anthropic, gemini
//
// The key comes from the provider's usual variable (OPENAI_API_KEY...; may be
// unset for a local server such as `nouscli mock-server`).

#include <cstdlib>
#include <iostream>
#include <nous/llm/chat.hpp>
#include <string>

using namespace nous::llm;

namespace {

/// The application's tool. A real one would parse call.arguments (JSON).
std::string run_tool(const ToolCall& call) {
    if (call.name == "get_weather") return R"({"temperature_c": 18, "sky": "clear"})";
    return R"({"error": "no such tool"})";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: tool_loop PROVIDER BASE_URL\n";
        return 2;
    }
    auto provider = provider_from_name(argv[1]);
    if (!provider) {
        std::cerr << "unknown provider " << argv[1] << "\n";
        return 2;
    }
    ChatRequest request;
    request.provider = *provider;
    request.base_url = argv[2];
    request.model = "mock-1";
    if (const char* key = std::getenv(default_api_key_env(*provider).c_str()))
        request.api_key = key;
    request.reasoning_effort = ReasoningEffort::low;  // signatures must survive the loop
    request.tools.push_back({"get_weather", "The weather in a city",
                             R"({"type":"object","properties":{"city":{"type":"string"}},)"
                             R"("required":["city"]})"});
    request.messages.push_back(ChatMessage::user("What is the weather in Paris?"));

    for (int turn = 1; turn <= 5; ++turn) {
        auto result = run_chat(request);
        if (!result) {
            std::cerr << to_string(result.error().code) << ": " << result.error().message << "\n";
            return 1;
        }
        if (!result->reasoning.text.empty())
            std::cout << "turn " << turn << " reasoning: " << result->reasoning.text << "\n";
        request.messages.push_back(result->message());
        if (result->tool_calls.empty()) {
            std::cout << "turn " << turn << " answer: " << result->text << "\n";
            return 0;
        }
        for (const ToolCall& call : result->tool_calls) {
            std::cout << "turn " << turn << " tool " << call.name << " " << call.arguments << "\n";
            request.messages.push_back(ChatMessage::tool_result(call.id, run_tool(call)));
        }
    }
    std::cerr << "the model never stopped calling tools\n";
    return 1;
}
