// The mock's credential check (credentials.hpp).

#include "credentials.hpp"

#include "chat_requests.hpp"
#include "embedding_replies.hpp"
#include "token_counts.hpp"

namespace nous::http::mock {

bool is_model_route(const std::string& method, const std::string& route) {
    return chat_route(method, route) || embedding_route(method, route) ||
           count_route(method, route);
}

bool credential_accepted(const MockRequest& request, const std::string& route,
                         const std::string& key, MockResponse& refusal) {
    const bool azure = route.rfind("/openai/", 0) == 0;
    const auto bearer = request.header("authorization");
    if (bearer && *bearer == "Bearer " + key) return true;
    for (const char* name : {"x-api-key", "x-goog-api-key", "api-key"})
        if (auto value = request.header(name); value && *value == key) return true;
    refusal.status = 401;
    refusal.headers = {{"Content-Type", "application/json"}};
    if (azure) {
        // Azure OpenAI's own words for a wrong api-key.
        refusal.body =
            R"({"error":{"code":"401","message":"Access denied due to invalid subscription key or )"
            R"(wrong API endpoint. Make sure to provide a valid key for an active subscription and )"
            R"(use a correct regional API endpoint for your resource."}})";
    } else {
        refusal.body =
            R"({"error":{"message":"Incorrect API key provided.","type":"invalid_request_error",)"
            R"("code":"invalid_api_key"}})";
    }
    return false;
}

}  // namespace nous::http::mock
