// A streamed chat call with nous_llm, for any provider: the tokens are
// printed as they arrive, then the usage of the whole call.
//
//   chat_stream PROVIDER BASE_URL    PROVIDER: openai, openai-responses, anthropic, gemini
//
// The key comes from the provider's usual variable (OPENAI_API_KEY...; may be
// unset for a local server such as `nouscli mock-server`).

#include <cstdlib>
#include <iostream>
#include <nous/llm/chat.hpp>

int main(int argc, char** argv) {
    if (argc < 3 || !nous::llm::provider_from_name(argv[1])) {
        std::cerr << "usage: chat_stream PROVIDER BASE_URL\n";
        return 2;
    }
    using namespace nous::llm;
    ChatRequest request;
    request.provider = *provider_from_name(argv[1]);  // openai, anthropic, gemini...
    request.base_url = argv[2];                       // empty: the provider's own
    request.model = "mock-1";
    if (const char* key = std::getenv(default_api_key_env(request.provider).c_str()))
        request.api_key = key;
    request.messages.push_back(ChatMessage::user("Say hello"));

    auto result = run_chat(request, {}, [](const Delta& delta) {
        std::cout << delta.text << std::flush;  // each token as it arrives
        return true;                            // false stops the stream
    });
    if (!result) {  // one typed error: its code, the provider's words
        std::cerr << to_string(result.error().code) << ": " << result.error().message << "\n";
        return 1;
    }
    std::cout << "\n";
    if (result->usage)
        std::cout << "tokens: " << result->usage->input_tokens << " in, "
                  << result->usage->output_tokens << " out\n";
    return 0;
}
