// Azure OpenAI, the first platform: the URL forms (v1, deployments with
// api-version), the credential (api-key, else AZURE_OPENAI_AD_TOKEN as a
// bearer), what is refused before a byte goes out, streamed and whole calls
// and embeddings against the mock with its key check, Azure's
// prompt_filter_results chunk and content_filter finish reason, the
// router's api_version, and the telemetry name.

#include <catch2/catch.hpp>
#include <cstdlib>

#include "chat_body.hpp"
#include "nous/llm/embed.hpp"
#include "nous/llm/router.hpp"
#include "nous/llm/run_chat.hpp"
#include "nous/llm/telemetry.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockServer;
using nous::http::MockServerOptions;

namespace {

std::string header(const Headers& headers, std::string_view name) {
    for (const auto& [n, v] : headers)
        if (nous::http::header_name_equals(n, name)) return v;
    return "<none>";
}

ChatRequest azure_request(Provider provider, std::string base, std::string key = "az-key") {
    ChatRequest r;
    r.provider = provider;
    r.base_url = std::move(base);
    r.api_key = std::move(key);
    r.model = "gpt-4o-mini";
    r.messages.push_back(ChatMessage::user("hello"));
    return r;
}

/// Sets an environment variable for one scope.
struct ScopedEnv {
    std::string name;
    ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
        ::setenv(name.c_str(), value, 1);
    }
    ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("azure: the v1 URL and the deployments form with api-version, the key in api-key") {
    auto v1 =
        build_chat_call(azure_request(Provider::azure, "https://res.openai.azure.com/openai/v1/"));
    REQUIRE(v1);
    CHECK(v1->url == "https://res.openai.azure.com/openai/v1/chat/completions");
    CHECK(header(v1->headers, "api-key") == "az-key");
    CHECK(header(v1->headers, "authorization") == "<none>");
    // The body is the OpenAI format's, byte for byte.
    ChatRequest same = azure_request(Provider::openai, "https://api.openai.com/v1");
    CHECK(v1->body == build_chat_call(same)->body);

    ChatRequest deployed =
        azure_request(Provider::azure, "https://res.openai.azure.com/openai/deployments/my-dep");
    deployed.api_version = "2024-10-21";
    auto d = build_chat_call(deployed);
    REQUIRE(d);
    CHECK(d->url ==
          "https://res.openai.azure.com/openai/deployments/my-dep/chat/completions?api-version="
          "2024-10-21");
    deployed.api_version = "2025-01-01 preview&x";  // percent-encoded, never a second parameter
    CHECK(build_chat_call(deployed)->url.ends_with("?api-version=2025-01-01%20preview%26x"));

    ChatRequest responses =
        azure_request(Provider::azure_responses, "https://res.openai.azure.com/openai/v1");
    responses.api_version = "preview";
    auto r = build_chat_call(responses);
    REQUIRE(r);
    CHECK(r->url == "https://res.openai.azure.com/openai/v1/responses?api-version=preview");
    // Azure serves OpenAI's models only, and so OpenAI's temperatures, 0 to 2.
    ChatRequest hot = azure_request(Provider::azure, "https://res.openai.azure.com/openai/v1");
    hot.temperature = 2;
    CHECK(build_chat_call(hot));
    hot.temperature = 2.5;
    auto refused = build_chat_call(hot);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message ==
          "temperature 2.5 is not taken by azure: it takes 0 to 2 (refused before sending)");
    CHECK(provider_from_name("azure") == Provider::azure);
    CHECK(provider_from_name("azure-responses") == Provider::azure_responses);
    CHECK(default_api_key_env(Provider::azure) == "AZURE_OPENAI_API_KEY");
    CHECK(otel_provider_name(Provider::azure) == "azure.ai.openai");
    CHECK(otel_provider_name(Provider::azure_responses) == "azure.ai.openai");
}

TEST_CASE("azure: without a key, AZURE_OPENAI_AD_TOKEN goes as a bearer") {
    ScopedEnv token("AZURE_OPENAI_AD_TOKEN", "entra-token");
    auto call = build_chat_call(
        azure_request(Provider::azure, "https://res.openai.azure.com/openai/v1", ""));
    REQUIRE(call);
    CHECK(header(call->headers, "authorization") == "Bearer entra-token");
    CHECK(header(call->headers, "api-key") == "<none>");
}

TEST_CASE(
    "azure: no base URL, deployments without a version, Responses under deployments: refused") {
    auto none = build_chat_call(azure_request(Provider::azure, ""));
    REQUIRE_FALSE(none);
    CHECK(none.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(none.error().message, Catch::Contains("needs a base URL"));
    auto unversioned = build_chat_call(
        azure_request(Provider::azure, "https://res.openai.azure.com/openai/deployments/d"));
    REQUIRE_FALSE(unversioned);
    CHECK_THAT(unversioned.error().message, Catch::Contains("needs an API version"));
    ChatRequest responses = azure_request(Provider::azure_responses,
                                          "https://res.openai.azure.com/openai/deployments/d");
    responses.api_version = "2024-10-21";
    auto refused = build_chat_call(responses);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("v1 base URL only"));
    // Chat completions take 128 tools at most ("A max of 128 functions are supported").
    ChatRequest many = azure_request(Provider::azure, "https://res.openai.azure.com/openai/v1");
    for (int i = 0; i < 128; ++i)
        many.tools.push_back({"tool_" + std::to_string(i), "", R"({"type":"object"})"});
    CHECK(build_chat_call(many));
    many.tools.push_back({"tool_128", "", R"({"type":"object"})"});
    auto too_many = build_chat_call(many);
    REQUIRE_FALSE(too_many);
    CHECK(too_many.error().code == ErrorCode::invalid_argument);
    CHECK(too_many.error().message == "azure takes 128 tools at most (129 given)");
    // And 4 stop sequences ("Up to 4 sequences").
    ChatRequest stops = azure_request(Provider::azure, "https://res.openai.azure.com/openai/v1");
    stops.stop = {"a", "b", "c", "d"};
    CHECK(build_chat_call(stops));
    stops.stop.push_back("e");
    auto too_many_stops = build_chat_call(stops);
    REQUIRE_FALSE(too_many_stops);
    CHECK(too_many_stops.error().message == "azure takes 4 stop sequences at most (5 given)");
    EmbedRequest e;
    e.provider = Provider::azure;
    e.model = "emb";
    e.inputs = {"x"};
    auto embedded = embed(e);
    REQUIRE_FALSE(embedded);
    CHECK(embedded.error().code == ErrorCode::invalid_argument);
}

TEST_CASE("azure against the mock: streamed and whole, v1 and deployments, a wrong key is auth") {
    MockServerOptions o;
    o.require_key = "az-key";
    MockServer server(o);
    server.start();
    for (Provider provider : {Provider::azure, Provider::azure_responses}) {
        for (bool stream : {true, false}) {
            INFO(to_string(provider) << (stream ? " streamed" : " whole"));
            ChatRequest r = azure_request(provider, server.base_url() + "/openai/v1");
            r.stream = stream;
            auto result = run_chat(r);
            REQUIRE(result);
            CHECK_FALSE(result->text.empty());
            CHECK(server.last_request().header("api-key") == "az-key");
        }
    }
    ChatRequest deployed =
        azure_request(Provider::azure, server.base_url() + "/openai/deployments/d1");
    deployed.api_version = "2024-10-21";
    auto result = run_chat(deployed);
    REQUIRE(result);
    CHECK(server.last_request().target ==
          "/openai/deployments/d1/chat/completions?api-version=2024-10-21");

    auto wrong = run_chat(azure_request(Provider::azure, server.base_url() + "/openai/v1", "nope"));
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().status == 401);
    CHECK_THAT(wrong.error().message, Catch::Contains("Access denied"));
    CHECK_THAT(wrong.error().message, !Catch::Contains("nope"));

    EmbedRequest e;
    e.provider = Provider::azure;
    e.base_url = server.base_url() + "/openai/deployments/emb";
    e.api_version = "2024-10-21";
    e.api_key = "az-key";
    e.model = "text-embedding-3-small";
    e.dimensions = 8;
    e.inputs = {"one", "two", "three"};
    auto embedded = embed(e);
    REQUIRE(embedded);
    CHECK(embedded->count == 3);
    CHECK(embedded->dimensions == 8);
    CHECK(server.last_request().target ==
          "/openai/deployments/emb/embeddings?api-version=2024-10-21");
}

TEST_CASE(
    "azure's prompt_filter_results chunk and a content_filter finish are read without error") {
    // As Azure streams: a first chunk with no choices and the prompt's filter
    // results, content_filter_results on each choice, and a reply cut by the
    // filter (finish_reason content_filter: the provider's own, the call succeeds).
    MockServer server;
    server.set_handler([](const nous::http::MockRequest&, nous::http::MockResponse& res) {
        res.headers.emplace_back("Content-Type", "text/event-stream");
        const std::string filters =
            R"({"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"}})";
        res.body =
            R"(data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":)" +
            filters +
            "}]}\n\n"
            R"(data: {"choices":[{"content_filter_results":{},"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"})"
            "\n\n"
            R"(data: {"choices":[{"content_filter_results":)" +
            filters +
            R"(,"delta":{"content":"Par"},"finish_reason":null,"index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"})"
            "\n\n"
            R"(data: {"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"content_filter","index":0}],"created":1,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"})"
            "\n\ndata: [DONE]\n\n";
        return true;
    });
    server.start();
    auto result = run_chat(azure_request(Provider::azure, server.base_url() + "/openai/v1"));
    REQUIRE(result);
    CHECK(result->text == "Par");
    CHECK(result->finish_reason == "content_filter");
}

TEST_CASE("a router deployment on azure carries its api_version") {
    ScopedEnv key("AZ_TEST_KEY", "az-key");
    auto config = router_config_from_json(
        R"({"deployments":[{"name":"east","provider":"azure","base_url":"https://e.openai.azure.com/openai/deployments/d","model":"m","api_key_env":"AZ_TEST_KEY","api_version":"2024-10-21"}]})");
    REQUIRE(config);
    REQUIRE(config->deployments.size() == 1);
    CHECK(config->deployments[0].provider == Provider::azure);
    CHECK(config->deployments[0].api_version == "2024-10-21");
    CHECK(config->deployments[0].api_key == "az-key");
    auto missing = router_config_from_json(
        R"({"deployments":[{"name":"west","provider":"azure","base_url":"https://w","model":"m"}]})");
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("AZURE_OPENAI_API_KEY"));
    CHECK_THAT(missing.error().message, Catch::Contains("AZURE_OPENAI_AD_TOKEN"));
}

TEST_CASE("azure's 429 names a quota increase link but is a rate limit, not an exhausted quota") {
    MockServer server;
    int calls = 0;
    server.set_handler([&](const nous::http::MockRequest&, nous::http::MockResponse& res) {
        if (++calls == 1) {
            res.status = 429;
            res.headers = {{"Content-Type", "application/json"}, {"retry-after", "0"}};
            res.body =
                R"({"error":{"code":"429","message":"Requests to the ChatCompletions_Create )"
                R"(Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate )"
                R"(limit of your current OpenAI S0 pricing tier. Please retry after 1 second. )"
                R"(Please go here: https://aka.ms/oai/quotaincrease if you would like to further )"
                R"(increase the default rate limit."}})";
            return true;
        }
        res.headers = {{"Content-Type", "application/json"}};
        res.body =
            R"({"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]})";
        return true;
    });
    server.start();
    ChatRequest r = azure_request(Provider::azure, server.base_url() + "/openai/v1");
    r.stream = false;
    nous::http::Options no_retry;
    no_retry.max_retries = 0;
    auto first = run_chat(r, no_retry);
    REQUIRE_FALSE(first);
    CHECK(first.error().status == 429);
    CHECK_FALSE(first.error().quota_exhausted);
    calls = 0;  // a 429 again, then the answer: the default policy retries it
    auto retried = run_chat(r);
    REQUIRE(retried);
    CHECK(retried->text == "ok");
    CHECK(calls == 2);
}
