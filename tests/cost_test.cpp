// What a call costs: the price table (exact names, the longest prefix*
// pattern, every refusal named), the formula with cache reads and 5-minute
// and one-hour cache writes priced apart, ChatResult::cost through run_chat
// and a Router, and the Prometheus cost counter.

#include "nous/llm/cost.hpp"

#include <catch2/catch.hpp>
#include <memory>

#include "nous/llm/chat.hpp"
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
