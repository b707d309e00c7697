// What a call costs: the price table (exact names, the longest prefix*
// pattern, every refusal named), the formula with cache reads and 5-minute
// and one-hour cache writes priced apart, ChatResult::cost through run_chat
// and a Router, and the Prometheus cost counter.

#include "nous/llm/cost.hpp"

#include <rapidjson/pointer.h>

#include <catch2/catch.hpp>
#include <limits>
#include <memory>

#include "chat_body.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/count_tokens.hpp"
#include "nous/llm/metrics.hpp"
#include "nous/llm/router.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockServer;

namespace {

const char* kTable = R"({"models":{
    "gpt-4o": {"input": 2.5, "output": 10, "cached_input": 1.25},
    "gpt-4o-mini*": {"input": 0.15, "output": 0.6},
    "gpt-*": {"input": 1, "output": 2},
    "claude-sonnet-4*": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75,
                         "cache_write_1h": 6}}})";

PriceTable table() {
    auto t = PriceTable::from_json(kTable);
    REQUIRE(t);
    return std::move(t.value());
}

}  // namespace

TEST_CASE("a model's price: its exact name, else the longest prefix* pattern, else none") {
    const PriceTable t = table();
    REQUIRE(t.find("gpt-4o"));
    CHECK(t.find("gpt-4o")->input == 2.5);
    CHECK(t.find("gpt-4o-mini-2024-07-18")->input == 0.15);  // the longer pattern wins
    CHECK(t.find("gpt-5")->input == 1);
    CHECK(t.find("gpt-4o-2024-08-06")->input == 1);  // "gpt-4o" is exact only
    CHECK_FALSE(t.find("llama-3"));
    Usage u;
    u.input_tokens = 1000;
    CHECK_FALSE(t.cost("llama-3", u));
}

TEST_CASE("the cost prices cache reads, cache writes and one-hour writes apart") {
    const PriceTable t = table();
    Usage u;
    u.input_tokens = 10'000;  // every input token: cache reads and writes included
    u.cached_input_tokens = 6'000;
    u.cache_write_input_tokens = 3'000;
    u.cache_write_1h_input_tokens = 1'000;
    u.output_tokens = 500;
    // 1,000 plain x 3 + 6,000 x 0.3 + 2,000 x 3.75 + 1,000 x 6 + 500 x 15, per million.
    CHECK(*t.cost("claude-sonnet-4-5", u) ==
          Approx((1'000 * 3 + 6'000 * 0.3 + 2'000 * 3.75 + 1'000 * 6 + 500 * 15) / 1e6));
    // Without cache prices a cached token costs the input price.
    CHECK(*t.cost("gpt-5", u) == Approx((10'000 * 1 + 500 * 2) / 1e6));
    CHECK(*t.cost("gpt-4o", u) ==
          Approx((1'000 * 2.5 + 6'000 * 1.25 + 3'000 * 2.5 + 500 * 10) / 1e6));
}

TEST_CASE("a price table that cannot be read is refused, naming what is wrong") {
    for (const auto& [json, words] : std::vector<std::pair<std::string, std::string>>{
             {"not json", "not JSON"},
             {R"({"prices":{}})", "\"models\""},
             {R"({"models":{"m":{"input":1}}})", "input and output prices are required"},
             {R"({"models":{"m":{"input":"1","output":2}}})", "input must be a number"},
             {R"({"models":{"m":{"input":-1,"output":2}}})", "0 or more"},
             {R"({"models":{"m":{"input":1,"output":2,"cache_read":1}}})", "unknown price"},
             {R"({"models":{"*":{"input":1,"output":2}}})", "empty model"}}) {
        auto t = PriceTable::from_json(json);
        REQUIRE_FALSE(t);
        CHECK(t.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(t.error().message, Catch::Contains(words));
    }
}

TEST_CASE("a price set in code is held to the same rules, and a refused one changes nothing") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    auto price = [](double input, double output, std::optional<double> cached_input = {},
                    std::optional<double> cache_write = {},
                    std::optional<double> cache_write_1h = {}) {
        return ModelPrice{.input = input,
                          .output = output,
                          .cached_input = cached_input,
                          .cache_write = cache_write,
                          .cache_write_1h = cache_write_1h};
    };
    PriceTable table;
    REQUIRE_FALSE(table.set("m", price(1, 2)));
    struct Bad {
        const char* model;
        ModelPrice price;
        const char* words;
    };
    for (const Bad& bad : std::vector<Bad>{{"m", price(nan, 2), "input"},
                                           {"m", price(1, -2), "output"},
                                           {"m", price(1, 2, inf), "cached_input"},
                                           {"m", price(1, 2, {}, -0.5), "cache_write"},
                                           {"m*", price(1, 2, {}, {}, nan), "cache_write_1h"},
                                           {"", price(1, 2), "empty model"},
                                           {"*", price(1, 2), "empty model"}}) {
        INFO(bad.words);
        auto refused = table.set(bad.model, bad.price);
        REQUIRE(refused);
        CHECK(refused->code == ErrorCode::invalid_argument);
        CHECK_THAT(refused->message, Catch::Contains(bad.words));
    }
    // Still the first price, and no pattern was added.
    REQUIRE(table.find("m"));
    CHECK(table.find("m")->input == 1);
    CHECK(table.find("m")->output == 2);
    CHECK_FALSE(table.find("mx"));
    Usage usage;
    usage.input_tokens = 1'000'000;
    CHECK(table.cost("m", usage) == 1.0);
}

TEST_CASE("ChatResult::cost through run_chat and a Router, and the metrics' cost counter") {
    MockServer server;
    server.start();
    auto prices = std::make_shared<const PriceTable>(table());
    auto metrics = std::make_shared<Metrics>();
    ChatRequest r;
    r.base_url = server.base_url() + "/v1";
    r.model = "gpt-4o";
    r.messages = {ChatMessage::user("hello")};
    r.prices = prices;
    r.observer = metrics;
    for (bool stream : {true, false}) {
        r.stream = stream;
        auto direct = run_chat(r);
        REQUIRE(direct);
        REQUIRE(direct->usage);
        REQUIRE(direct->cost);
        CHECK(*direct->cost == Approx(*prices->cost("gpt-4o", *direct->usage)));
        CHECK(*direct->cost > 0);
    }
    r.model = "unpriced";
    auto unpriced = run_chat(r);
    REQUIRE(unpriced);
    CHECK_FALSE(unpriced->cost);
    r.prices = nullptr;
    CHECK_FALSE(run_chat(r)->cost);

    RouterConfig config;
    Deployment down;
    down.name = "down";
    down.base_url = "http://127.0.0.1:1/v1";
    down.model = "gpt-4o";
    Deployment up = down;
    up.name = "up";
    up.base_url = server.base_url() + "/v1";
    up.weight = 0;
    config.deployments = {down, up};
    auto router = Router::create(config);
    REQUIRE(router);
    r.prices = prices;
    auto routed = router.value()->chat(r);
    REQUIRE(routed);
    REQUIRE(routed->cost);  // the failed attempt reported no usage: the answering one's cost
    CHECK(*routed->cost == Approx(*prices->cost("gpt-4o", *routed->usage)));

    const std::string text = metrics->prometheus_text();
    CHECK_THAT(text, Catch::Contains("# TYPE gen_ai_client_cost_usd_total counter"));
    CHECK_THAT(
        text, Catch::Contains("gen_ai_client_cost_usd_total{gen_ai_operation_name=\"chat\","
                              "gen_ai_provider_name=\"openai\",gen_ai_request_model=\"gpt-4o\"} "));
}

// ---- prompt caching: each format's own fields, a setting it does not take refused ----

namespace {

using nous::test::body_of;

std::string json_at(const rapidjson::Value& root, const char* pointer) {
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(root);
    return v ? nous::http::to_json(*v) : "<absent>";
}

ChatRequest conversation(Provider p) {
    ChatRequest r;
    r.provider = p;
    r.model = "m";
    r.stream = false;
    r.system = "Long instructions.";
    r.tools = {{"f", "a tool", R"({"type":"object"})"}, {"g", "another", R"({"type":"object"})"}};
    r.messages = {ChatMessage::user("first"), ChatMessage::assistant("answer"),
                  ChatMessage::user("second")};
    return r;
}

}  // namespace

TEST_CASE(
    "Anthropic caching: automatic at the top, breakpoints on the last system block, tool and "
    "message") {
    ChatRequest r = conversation(Provider::anthropic);
    r.cache = PromptCache{.automatic = true};
    auto automatic = body_of(r);
    CHECK(json_at(*automatic, "/cache_control") == R"({"type":"ephemeral"})");
    CHECK(json_at(*automatic, "/system") == R"("Long instructions.")");

    r.cache = PromptCache{.system = true, .tools = true, .last_message = true, .ttl = "1h"};
    auto b = body_of(r);
    const std::string hour = R"({"type":"ephemeral","ttl":"1h"})";
    CHECK(json_at(*b, "/system/0/text") == R"("Long instructions.")");
    CHECK(json_at(*b, "/system/0/cache_control") == hour);
    CHECK(json_at(*b, "/tools/0/cache_control") == "<absent>");
    CHECK(json_at(*b, "/tools/1/cache_control") == hour);
    CHECK(json_at(*b, "/messages/2/content/0/text") == R"("second")");
    CHECK(json_at(*b, "/messages/2/content/0/cache_control") == hour);
    CHECK(json_at(*b, "/messages/0/content") == R"("first")");  // earlier messages as they were
    CHECK(json_at(*b, "/cache_control") == "<absent>");

    // A breakpoint on what the request lacks, or a setting that makes no sense: refused.
    r.tools.clear();
    r.cache = PromptCache{.tools = true};
    CHECK_THAT(build_chat_call(r).error().message, Catch::Contains("the tools"));
    r.cache = PromptCache{.automatic = true, .system = true};
    CHECK_FALSE(build_chat_call(r));
    r.cache = PromptCache{};
    CHECK_FALSE(build_chat_call(r));
    r.cache = PromptCache{.automatic = true, .ttl = "10m"};
    CHECK_THAT(build_chat_call(r).error().message, Catch::Contains("5m or 1h"));
    r.cache.reset();
    for (auto set : {+[](ChatRequest& q) { q.prompt_cache_key = "k"; },
                     +[](ChatRequest& q) { q.cached_content = "cachedContents/x"; }}) {
        ChatRequest q = r;
        set(q);
        auto refused = build_chat_call(q);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(refused.error().message, Catch::Contains("anthropic"));
    }
}

TEST_CASE(
    "the OpenAI formats take prompt_cache_key and prompt_cache_retention, Gemini cachedContent") {
    for (Provider p : {Provider::openai, Provider::openai_responses}) {
        ChatRequest r = conversation(p);
        r.prompt_cache_key = "tenant-42";
        r.prompt_cache_retention = "24h";
        auto b = body_of(r);
        CHECK(json_at(*b, "/prompt_cache_key") == R"("tenant-42")");
        CHECK(json_at(*b, "/prompt_cache_retention") == R"("24h")");
        r.prompt_cache_retention = "forever";
        CHECK_FALSE(build_chat_call(r));
        r.prompt_cache_retention.clear();
        r.cache = PromptCache{.automatic = true};  // they cache by themselves
        CHECK_THAT(build_chat_call(r).error().message, Catch::Contains("cache breakpoints"));
        r.cache.reset();
        r.cached_content = "cachedContents/x";
        CHECK_FALSE(build_chat_call(r));
    }
    ChatRequest g = conversation(Provider::gemini);
    g.cached_content = "cachedContents/abc";
    CHECK(json_at(*body_of(g), "/cachedContent") == R"("cachedContents/abc")");
    g.prompt_cache_key = "k";
    CHECK_FALSE(build_chat_call(g));
    g.prompt_cache_key.clear();
    g.cache = PromptCache{.last_message = true};
    CHECK_FALSE(build_chat_call(g));
}

// ---- counting tokens: the provider's own counter, the body its type takes ----------

TEST_CASE("count_tokens asks each provider's counter and answers what the call's usage reports") {
    MockServer server;
    server.start();
    std::vector<std::pair<std::string, std::string>> seen;  // target, body
    server.set_handler([&](const nous::http::MockRequest& req, nous::http::MockResponse&) {
        seen.emplace_back(req.target, req.body);
        return false;  // the mock answers as ever
    });
    for (Provider p : {Provider::anthropic, Provider::openai_responses, Provider::gemini}) {
        INFO(std::string(to_string(p)));
        ChatRequest r = conversation(p);
        r.base_url = server.base_url() + (p == Provider::gemini ? "/v1beta" : "/v1");
        r.temperature = 0.3;
        r.max_tokens = 77;
        seen.clear();
        auto n = count_tokens(r);
        REQUIRE(n);
        REQUIRE(seen.size() == 1);
        const auto& [target, body] = seen[0];
        // The counter's own route and body: no sampling, output limit or stream.
        CHECK_THAT(target, Catch::Contains(p == Provider::anthropic ? "/messages/count_tokens"
                                           : p == Provider::gemini  ? "/models/m:countTokens"
                                                                    : "/responses/input_tokens"));
        // Gemini counts the request it would generate from, generationConfig included.
        CHECK((body.find("temperature") != std::string::npos) == (p == Provider::gemini));
        CHECK(body.find("max_tokens") == std::string::npos);
        CHECK(body.find("\"stream\"") == std::string::npos);
        if (p == Provider::gemini)
            CHECK(body.rfind(R"({"generateContentRequest":{"model":"models/m",)", 0) == 0);
        auto call = run_chat(r);
        REQUIRE(call);
        REQUIRE(call->usage);
        CHECK(n.value() == call->usage->input_tokens);  // the mock's count is its usage
    }
    // OpenAI chat completions has no counter: refused before any connection.
    ChatRequest openai = conversation(Provider::openai);
    openai.base_url = server.base_url() + "/v1";
    seen.clear();
    auto none = count_tokens(openai);
    REQUIRE_FALSE(none);
    CHECK(none.error().code == ErrorCode::invalid_argument);
    CHECK(seen.empty());
    // A counter that answers an error is the provider's error; one without a count is protocol.
    server.set_handler([](const nous::http::MockRequest&, nous::http::MockResponse& res) {
        res.body = R"({"tokens":3})";
        return true;
    });
    ChatRequest a = conversation(Provider::anthropic);
    a.base_url = server.base_url() + "/v1";
    auto odd = count_tokens(a);
    REQUIRE_FALSE(odd);
    CHECK(odd.error().code == ErrorCode::protocol);
    server.set_handler([](const nous::http::MockRequest&, nous::http::MockResponse& res) {
        res.status = 400;
        res.body =
            R"({"type":"error","error":{"type":"invalid_request_error","message":"bad model"}})";
        return true;
    });
    auto refused = count_tokens(a);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().status == 400);
    CHECK_THAT(refused.error().message, Catch::Contains("bad model"));
}

TEST_CASE("the mock caches a marked prompt: the same call again reads it and costs less") {
    // Anthropic's breakpoints and Bedrock's cachePoint write the prompt the
    // first time and read it the second; OpenAI's prompt_cache_key reads it
    // the second time (it bills no write). The cost falls by the formula.
    MockServer server;
    server.start();
    auto prices = std::make_shared<const PriceTable>(table());
    const std::string prompt(2000, 'x');
    struct Case {
        Provider provider;
        const char* model;
        bool writes;
    };
    ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
    for (const Case& c : {Case{Provider::anthropic, "claude-sonnet-4-5", true},
                          Case{Provider::bedrock, "claude-sonnet-4-5", true},
                          Case{Provider::openai, "gpt-4o", false}}) {
        INFO(to_string(c.provider));
        ChatRequest r;
        r.provider = c.provider;
        r.base_url = server.base_url() + (c.provider == Provider::bedrock ? "" : "/v1");
        r.api_key = c.provider == Provider::bedrock ? "" : "k";
        r.model = c.model;
        r.system = "Long instructions.";
        r.messages = {ChatMessage::user(prompt)};
        r.prices = prices;
        r.stream = false;
        if (c.provider == Provider::openai)
            r.prompt_cache_key = "tenant-1";
        else
            r.cache = PromptCache{false, true, false, true, ""};
        auto first = run_chat(r);
        auto second = run_chat(r);
        REQUIRE(first);
        REQUIRE(second);
        REQUIRE(first->usage);
        REQUIRE(second->usage);
        CHECK(first->usage->cached_input_tokens == 0);
        CHECK(first->usage->cache_write_input_tokens ==
              (c.writes ? first->usage->input_tokens : 0));
        CHECK(second->usage->cached_input_tokens == second->usage->input_tokens);
        CHECK(second->usage->input_tokens == first->usage->input_tokens);
        REQUIRE(first->cost);
        REQUIRE(second->cost);
        CHECK(*second->cost < *first->cost);
        CHECK(*second->cost == Approx(*prices->cost(c.model, *second->usage)));
        // A different prompt is not the cached one.
        r.messages = {ChatMessage::user(prompt + "y")};
        auto other = run_chat(r);
        REQUIRE(other);
        CHECK(other->usage->cached_input_tokens == 0);
    }
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
    ::unsetenv("AWS_REGION");
}
