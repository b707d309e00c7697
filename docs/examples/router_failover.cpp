// A Router with nous_llm: one logical model over two deployments; a call
// that fails on the first before any content goes to the second, and the
// report says which answered and why the first was left.
//
//   router_failover PRIMARY_BASE_URL FALLBACK_BASE_URL    (both OpenAI chat)

#include <iostream>
#include <nous/llm/chat.hpp>
#include <nous/llm/router.hpp>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: router_failover PRIMARY_BASE_URL FALLBACK_BASE_URL\n";
        return 2;
    }
    using namespace nous::llm;
    RouterConfig config;
    config.deployments.push_back({.name = "primary", .base_url = argv[1], .model = "mock-1"});
    config.deployments.push_back(
        {.name = "fallback", .base_url = argv[2], .model = "mock-1", .weight = 0});
    auto router = Router::create(config);
    if (!router) {
        std::cerr << router.error().message << "\n";
        return 1;
    }

    ChatRequest request;  // the deployment supplies provider, URL, key and model
    request.messages.push_back(ChatMessage::user("Say hello"));
    RouteReport report;
    auto result = router.value()->chat(request, {}, {}, &report);
    for (const RouteAttempt& attempt : report.attempts)
        if (!attempt.reason.empty())
            std::cout << attempt.deployment << ": " << attempt.reason << "\n";
    if (!result) {
        std::cerr << to_string(result.error().code) << ": " << result.error().message << "\n";
        return 1;
    }
    std::cout << report.deployment << " answered: " << result->text << "\n";
    return 0;
}
