// Five lines of the README's example, against the installed headers and library.
#include <iostream>
#include <nous/http/client.hpp>
#include <nous/mock/mock_server.hpp>

int main() {
    nous::http::MockServer server;
    server.start();
    nous::http::Headers headers;
    nous::http::add_bearer_auth(headers, "sk-test");
    auto result = nous::http::post(
        server.base_url() + "/v1/chat/completions",
        R"({"model":"mock-1","messages":[{"role":"user","content":"hi"}]})", headers);
    if (!result) {
        std::cerr << "error: " << result.error().message << "\n";
        return 1;
    }
    std::cout << result->status << " " << result->body << "\n";
    return result->status == 200 && result->body.find("chat.completion") != std::string::npos ? 0
                                                                                              : 1;
}
