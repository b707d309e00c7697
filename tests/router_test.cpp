// The Router: failover on each failure kind and never after content,
// cooldowns (an injected clock), budgets from the configuration and from
// the provider's headers, a token reservation settled by the real usage,
// `saturated` after queue_timeout, the strategies, the router file, and the
// shared state in a real redis-server: two routers share counts and
// cooldowns, and Redis killed mid-run costs no call.

#include "nous/llm/router.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>

#include "llm/router/limits_store.hpp"
#include "llm/router/redis_limits.hpp"
#include "nous/http/log.hpp"
#include "nous/llm/detail/router_access.hpp"
#include "nous/llm/run_chat.hpp"
#include "nous/mock/mock_server.hpp"
#include "redis_server.hpp"
#include "sleeping_wait.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockRequest;
using nous::http::MockResponse;
using nous::http::MockServer;
using nous::http::MockServerOptions;
using namespace std::chrono_literals;

namespace {

/// A mock that counts the requests it was sent (those its limits refused too).
struct CountingMock {
    MockServer server;
    std::atomic<int> requests{0};
    explicit CountingMock(MockServerOptions o = {}) : server(std::move(o)) {
        server.set_handler([this](const MockRequest&, MockResponse&) {
            ++requests;
            return false;
        });
        server.start();
    }
    Deployment deployment(const std::string& name, Provider provider = Provider::openai) const {
        Deployment d;
        d.name = name;
        d.provider = provider;
        d.base_url = server.base_url() + (provider == Provider::gemini ? "/v1beta" : "/v1");
        d.api_key = "sk-" + name;
        d.model = "mock-1";
        return d;
    }
};

MockServerOptions faulty(const std::string& fault) {
    MockServerOptions o;
    o.fault = fault;
    return o;
}

ChatRequest hello(bool stream = true) {
    ChatRequest r;
    r.messages = {ChatMessage::user("hello")};
    r.stream = stream;
    r.max_tokens = 64;
    return r;
}

std::unique_ptr<Router> router_of(RouterConfig config) {
    auto r = Router::create(std::move(config));
    REQUIRE(r);
    return std::move(r.value());
}

/// A clock the test moves by hand.
struct ManualClock {
    std::chrono::system_clock::time_point t =
        std::chrono::system_clock::time_point(std::chrono::minutes(29'000'000)) + 10s;
    std::function<std::chrono::system_clock::time_point()> fn() {
        return [this] { return t; };
    }
};

}  // namespace

TEST_CASE("a failure before any content moves the call to the next deployment, whatever its kind") {
    CountingMock healthy;
    for (const char* fault : {"rate_limit", "quota", "overloaded", "server_error"}) {
        INFO(fault);
        for (bool stream : {true, false}) {
            CountingMock failing(faulty(fault));
            RouterConfig config;
            config.deployments = {failing.deployment("a"), healthy.deployment("b")};
            config.deployments[1].weight = 0;  // only a fallback: "a" is always first
            auto router = router_of(config);
            RouteReport report;
            auto r = router->chat(hello(stream), {}, {}, &report);
            REQUIRE(r);
            CHECK(report.deployment == "b");
            REQUIRE(report.attempts.size() == 2);
            CHECK(report.attempts[0].deployment == "a");
            CHECK_THAT(report.attempts[0].reason, Catch::Contains("HTTP"));
            CHECK(report.attempts[1].reason.empty());
            CHECK(failing.requests == 1);  // no retry of its own: failover is the retry
        }
    }
    // Nothing listening, and a stream that never brings content in time.
    CountingMock silent(faulty("keepalive_only"));
    RouterConfig config;
    Deployment closed = healthy.deployment("closed");
    closed.base_url = "http://127.0.0.1:1/v1";
    config.deployments = {closed, silent.deployment("silent"), healthy.deployment("b")};
    config.deployments[1].weight = 0;
    config.deployments[2].weight = 0;
    auto router = router_of(config);
    nous::http::Options options;
    options.first_event_timeout = 200ms;
    RouteReport report;
    auto r = router->chat(
        hello(), options, [](const Delta&) { return true; }, &report);
    REQUIRE(r);
    CHECK(report.deployment == "b");
    REQUIRE(report.attempts.size() == 3);
    CHECK_THAT(report.attempts[0].reason, Catch::StartsWith("connect_failed"));
    CHECK_THAT(report.attempts[1].reason, Catch::StartsWith("timeout_read"));
}

TEST_CASE(
    "each attempt carries its own deployment's fields, and the caller's request is left as it "
    "was") {
    CountingMock failing(faulty("server_error"));
    MockServer healthy;
    std::mutex seen_mutex;
    std::vector<std::string> seen;  // each request's key and model, as the healthy mock got them
    healthy.set_handler([&](const MockRequest& req, MockResponse&) {
        std::lock_guard lock(seen_mutex);
        seen.push_back(
            req.header("authorization").value_or("") + " " +
            (req.body.find("\"model\":\"model-b\"") != std::string::npos ? "model-b" : "other"));
        return false;
    });
    healthy.start();
    RouterConfig config;
    Deployment a = failing.deployment("a");
    a.model = "model-a";
    Deployment b;
    b.name = "b";
    b.base_url = healthy.base_url() + "/v1";
    b.api_key = "sk-b";
    b.model = "model-b";
    config.deployments = {a, b};
    config.deployments[1].weight = 0;
    const ChatRequest mine = [] {
        ChatRequest r = hello(false);
        r.model = "caller-model";
        r.api_key = "sk-caller";
        r.base_url = "http://caller.invalid/v1";
        return r;
    }();
    for (int given_up = 0; given_up < 2; ++given_up) {
        INFO((given_up ? "an rvalue request" : "a const request"));
        auto router = router_of(config);  // "a" fresh, not cooling down from the last round
        RouteReport report;
        auto r = given_up ? router->chat(ChatRequest(mine), {}, {}, &report)
                          : router->chat(mine, {}, {}, &report);
        REQUIRE(r);
        CHECK(report.deployment == "b");
        REQUIRE(report.attempts.size() == 2);
    }
    CHECK(mine.model == "caller-model");
    CHECK(mine.api_key == "sk-caller");
    CHECK(mine.base_url == "http://caller.invalid/v1");
    std::lock_guard lock(seen_mutex);
    CHECK(seen == std::vector<std::string>{"Bearer sk-b model-b", "Bearer sk-b model-b"});
}

TEST_CASE("a failure after content reached the caller is returned as it is, never restarted") {
    CountingMock healthy;
    for (const char* fault : {"midstream_error", "truncate"}) {
        INFO(fault);
        CountingMock failing(faulty(fault));
        RouterConfig config;
        config.deployments = {failing.deployment("a"), healthy.deployment("b")};
        config.deployments[1].weight = 0;
        auto router = router_of(config);
        std::string seen;
        RouteReport report;
        auto r = router->chat(
            hello(), {},
            [&](const Delta& d) {
                seen += d.text;
                return true;
            },
            &report);
        CHECK_FALSE(seen.empty());
        REQUIRE(report.attempts.size() == 1);
        CHECK(healthy.requests == 0);
        if (std::string(fault) == "truncate") {
            REQUIRE_FALSE(r);
            CHECK(r.error().code == ErrorCode::truncated);
        } else {
            REQUIRE(r);
            CHECK(r->stream_error);
        }
    }
    // With no callback nothing reached the caller: the same error event fails over.
    CountingMock failing(faulty("midstream_error"));
    RouterConfig config;
    config.deployments = {failing.deployment("a"), healthy.deployment("b")};
    config.deployments[1].weight = 0;
    RouteReport report;
    auto r = router_of(config)->chat(hello(), {}, {}, &report);
    REQUIRE(r);
    CHECK_FALSE(r->stream_error);
    CHECK(report.deployment == "b");
}

TEST_CASE("a request the provider calls malformed is not failed over") {
    CountingMock healthy;
    MockServer bad;
    bad.set_handler([](const MockRequest&, MockResponse& res) {
        res.status = 400;
        res.body = R"({"error":{"message":"bad field","type":"invalid_request_error"}})";
        return true;
    });
    bad.start();
    RouterConfig config;
    Deployment a = healthy.deployment("a");
    a.base_url = bad.base_url() + "/v1";
    config.deployments = {a, healthy.deployment("b")};
    config.deployments[1].weight = 0;
    RouteReport report;
    auto r = router_of(config)->chat(hello(false), {}, {}, &report);
    REQUIRE_FALSE(r);
    CHECK(r.error().status == 400);
    CHECK(report.attempts.size() == 1);
    CHECK(healthy.requests == 0);
}

TEST_CASE("when every deployment fails, the error names each with its reason") {
    CountingMock a(faulty("overloaded")), b(faulty("server_error"));
    RouterConfig config;
    config.deployments = {a.deployment("east"), b.deployment("west", Provider::anthropic)};
    auto r = router_of(config)->chat(hello(false));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::http_status);
    CHECK_THAT(r.error().message, Catch::StartsWith("every deployment failed: east: HTTP 503"));
    CHECK_THAT(r.error().message, Catch::Contains("west: HTTP 500"));
    CHECK(a.requests == 1);
    CHECK(b.requests == 1);
}

TEST_CASE(
    "cooldowns: 5 s doubling, the server's hint honoured, never shortened, quota until its reset") {
    // The store's rule, with a clock of its own.
    detail::LocalLimits limits({{"a", 0, 0}});
    const auto t0 = std::chrono::system_clock::time_point(std::chrono::minutes(29'000'000));
    detail::Outcome failure;
    failure.kind = detail::Outcome::Kind::failure;
    CHECK(limits.settle(0, failure, t0) == t0 + 5s);
    CHECK(limits.settle(0, failure, t0 + 5s) == t0 + 15s);   // the second in a row: 10 s
    CHECK(limits.settle(0, failure, t0 + 15s) == t0 + 35s);  // 20 s
    detail::Outcome hinted = failure;
    hinted.hint = 1s;  // shorter than the running cooldown: it stays
    CHECK(limits.settle(0, hinted, t0 + 16s) == t0 + 35s);
    hinted.hint = 60s;
    CHECK(limits.settle(0, hinted, t0 + 16s) == t0 + 76s);
    for (int i = 0; i < 20; ++i) limits.settle(0, failure, t0 + 100s);  // capped at 5 min
    CHECK(limits.settle(0, failure, t0 + 100s) == t0 + 400s);
    detail::Outcome success;
    limits.settle(0, success, t0 + 500s);
    CHECK(limits.settle(0, failure, t0 + 500s) == t0 + 505s);  // the count started again
    detail::Outcome quota;
    quota.kind = detail::Outcome::Kind::quota;
    detail::LocalLimits fresh({{"q", 0, 0}});
    CHECK(fresh.settle(0, quota, t0) == t0 + 1h);
    quota.quota_until = t0 + 2h;
    CHECK(fresh.settle(0, quota, t0) == t0 + 2h);

    // Through a router: a deployment that failed is skipped until its cooldown ends.
    ManualClock clock;
    CountingMock failing(faulty("server_error")), healthy;
    RouterConfig config;
    config.deployments = {failing.deployment("a"), healthy.deployment("b")};
    config.deployments[1].weight = 0;
    config.now = clock.fn();
    auto router = router_of(config);
    RouteReport report;
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(report.attempts.size() == 2);
    clock.t += 4s;
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(report.attempts.size() == 1);  // "a" skipped: 1 s of its 5 s left
    CHECK(failing.requests == 1);
    clock.t += 2s;
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(failing.requests == 2);  // tried again, failed again: now 10 s
    clock.t += 9s;
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(failing.requests == 2);
    clock.t += 2s;
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(failing.requests == 3);
}

TEST_CASE("budgets: the configured rpm, corrected by the provider's headers") {
    ManualClock clock;
    CountingMock a, b;
    RouterConfig config;
    config.deployments = {a.deployment("a"), b.deployment("b")};
    config.deployments[0].rpm = 2;
    config.deployments[1].weight = 0;
    config.now = clock.fn();
    auto router = router_of(config);
    RouteReport report;
    for (int i = 0; i < 5; ++i) {
        REQUIRE(router->chat(hello(false), {}, {}, &report));
        CHECK(report.deployment == (i < 2 ? "a" : "b"));
    }
    CHECK(a.requests == 2);
    clock.t += 60s;  // the next minute's window
    REQUIRE(router->chat(hello(false), {}, {}, &report));
    CHECK(report.deployment == "a");

    // No rpm configured, but the provider says none is left (the mock's own
    // --rpm 1): the next call goes elsewhere without a request sent to it.
    MockServerOptions limited;
    limited.rpm = 1;
    CountingMock c(limited), d;
    RouterConfig headers_only;
    headers_only.deployments = {c.deployment("c"), d.deployment("d")};
    headers_only.deployments[1].weight = 0;
    auto corrected = router_of(headers_only);
    REQUIRE(corrected->chat(hello(false), {}, {}, &report));
    CHECK(report.deployment == "c");
    REQUIRE(corrected->chat(hello(false), {}, {}, &report));
    CHECK(report.deployment == "d");
    CHECK(report.attempts.size() == 1);
    CHECK(c.requests == 1);
}

TEST_CASE("a call reserves its estimated tokens and settles with the real usage") {
    ManualClock clock;
    CountingMock a, b;
    RouterConfig config;
    config.deployments = {a.deployment("a"), b.deployment("b")};
    config.deployments[0].tpm = 2'500;  // two estimates of ~1,000 fit, not three
    config.deployments[1].weight = 0;
    config.now = clock.fn();
    auto router = router_of(config);
    ChatRequest request = hello(false);
    request.max_tokens = 1000;
    RouteReport report;
    // Each call settles at its real usage (tens of tokens): all six fit.
    for (int i = 0; i < 6; ++i) {
        REQUIRE(router->chat(request, {}, {}, &report));
        CHECK(report.deployment == "a");
    }
    // A request whose own estimate is over the budget goes elsewhere.
    request.max_tokens = 3000;
    REQUIRE(router->chat(request, {}, {}, &report));
    CHECK(report.deployment == "b");
}

TEST_CASE("no budget anywhere: saturated at once past queue_timeout, naming each budget") {
    ManualClock clock;  // 10 s into a minute: the window ends in 50 s
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("a")};
    config.deployments[0].rpm = 1;
    config.queue_timeout = 10s;  // the window ends in 50 s: no use waiting
    config.now = clock.fn();
    auto router = router_of(config);
    REQUIRE(router->chat(hello(false)));
    const auto start = std::chrono::steady_clock::now();
    auto r = router->chat(hello(false));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::saturated);
    CHECK_THAT(r.error().message, Catch::Contains("a: no budget this minute: 1 of 1 requests"));
    CHECK(std::chrono::steady_clock::now() - start < 5s);  // at once, not after 10 s
    CHECK(a.requests == 1);
}

TEST_CASE("a call waits for a cooldown that ends within queue_timeout") {
    MockServer flaky;
    std::atomic<int> calls{0};
    flaky.set_handler([&](const MockRequest&, MockResponse& res) {
        if (calls++ > 0) return false;
        res.status = 503;
        res.headers = {{"retry-after-ms", "150"}};
        res.body = R"({"error":{"message":"busy","type":"server_error"}})";
        return true;
    });
    flaky.start();
    Deployment only;
    only.name = "only";
    only.base_url = flaky.base_url() + "/v1";
    only.model = "mock-1";
    RouterConfig config;
    config.deployments = {only};
    config.queue_timeout = 5s;
    auto router = router_of(config);
    auto first = router->chat(hello(false));
    REQUIRE_FALSE(first);
    CHECK_THAT(first.error().message, Catch::StartsWith("every deployment failed: only: HTTP 503"));
    auto second = router->chat(hello(false));  // cooling for 150 ms: it waits, then goes
    REQUIRE(second);
    CHECK(calls == 2);
}

TEST_CASE(
    "strategies: least_busy avoids the busy one, latency prefers the fast one, weights share") {
    // least_busy: "a" holds a call in flight (its mock waits for the test).
    MockServer slow;
    std::mutex mutex;
    std::condition_variable changed;
    bool arrived = false, release = false;
    slow.set_handler([&](const MockRequest&, MockResponse&) {
        std::unique_lock lock(mutex);
        arrived = true;
        changed.notify_all();
        changed.wait_for(lock, 20s, [&] { return release; });
        return false;
    });
    slow.start();
    CountingMock b;
    RouterConfig config;
    config.strategy = RouteStrategy::least_busy;
    Deployment a = b.deployment("a");
    a.base_url = slow.base_url() + "/v1";
    config.deployments = {a, b.deployment("b")};
    auto router = router_of(config);
    RouteReport first_report, second_report;
    std::thread first([&] { REQUIRE(router->chat(hello(false), {}, {}, &first_report)); });
    {
        std::unique_lock lock(mutex);
        changed.wait_for(lock, 20s, [&] { return arrived; });
    }
    REQUIRE(router->chat(hello(false), {}, {}, &second_report));
    CHECK(second_report.deployment == "b");
    {
        std::lock_guard lock(mutex);
        release = true;
        changed.notify_all();
    }
    first.join();
    CHECK(first_report.deployment == "a");

    // latency: "slow" answers 80 ms later; after one measurement of each,
    // the fast one takes all but every tenth choice.
    MockServerOptions delayed;
    delayed.first_token_latency = 80ms;
    CountingMock lagging(delayed), fast;
    RouterConfig by_latency;
    by_latency.strategy = RouteStrategy::latency;
    by_latency.deployments = {lagging.deployment("slow"), fast.deployment("fast")};
    auto latency_router = router_of(by_latency);
    for (int i = 0; i < 30; ++i) REQUIRE(latency_router->chat(hello(false)));
    CHECK(fast.requests >= 25);
    CHECK(lagging.requests >= 2);  // measured, and tried now and then

    // weighted: 3 to 1.
    CountingMock heavy, light;
    RouterConfig weighted;
    weighted.deployments = {heavy.deployment("heavy"), light.deployment("light")};
    weighted.deployments[0].weight = 3;
    auto weighted_router = router_of(weighted);
    for (int i = 0; i < 400; ++i) REQUIRE(weighted_router->chat(hello(false)));
    CHECK(heavy.requests > 240);
    CHECK(heavy.requests < 360);
}

TEST_CASE("the router file: strategies, limits, keys from their variables, errors named") {
    ::setenv("NOUS_TEST_KEY_A", "sk-a", 1);
    ::unsetenv("NOUS_TEST_KEY_UNSET");
    auto config = router_config_from_json(R"({"strategy":"least_busy","queue_timeout_ms":250,
        "deployments":[{"name":"a","provider":"anthropic","base_url":"http://x/v1","model":"m",
        "api_key_env":"NOUS_TEST_KEY_A","weight":2.5,"rpm":10,"tpm":1000,"max_concurrency":3}]})");
    REQUIRE(config);
    CHECK(config->strategy == RouteStrategy::least_busy);
    CHECK(config->queue_timeout == 250ms);
    const Deployment& d = config->deployments[0];
    CHECK(d.provider == Provider::anthropic);
    CHECK(d.api_key == "sk-a");
    CHECK(d.weight == 2.5);
    CHECK(d.rpm == 10);
    CHECK(d.tpm == 1000);
    CHECK(d.max_concurrency == 3);
    const std::pair<const char*, const char*> bad[] = {
        {R"({"deployments":[{"name":"a","model":"m","api_key_env":"NOUS_TEST_KEY_UNSET"}]})",
         "deployment 'a': NOUS_TEST_KEY_UNSET is not set"},
        {R"({"strategy":"fastest","deployments":[]})", "strategy"},
        {R"({"deployments":[]})", "non-empty"},
        {R"({"deployments":[{"model":"m"}]})", "needs a \"name\""},
        {R"({"deployments":[{"name":"a","api_key_env":"NOUS_TEST_KEY_A"}]})", "needs a \"model\""},
        {R"({"deployments":[{"name":"a","model":"m","rpm":0,"api_key_env":"NOUS_TEST_KEY_A"}]})",
         "rpm"},
        {R"({"deployments":[{"name":"a","model":"m","provider":"bard","api_key_env":"NOUS_TEST_KEY_A"}]})",
         "provider"},
    };
    for (const auto& [json, words] : bad) {
        INFO(json);
        auto r = router_config_from_json(json);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(r.error().message, Catch::Contains(words));
    }
    RouterConfig twice;
    twice.deployments = {d, d};
    CHECK_FALSE(Router::create(twice));
    // A weight must be a number the draw can sum: not NaN, infinite, or so
    // large that two of them overflow.
    for (const double weight :
         {std::nan(""), std::numeric_limits<double>::infinity(), -1.0, 1.7e308}) {
        INFO(weight);
        RouterConfig weighted;
        weighted.deployments = {d};
        weighted.deployments[0].weight = weight;
        auto r = Router::create(weighted);
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().message, Catch::Contains("weight"));
    }
    RouterConfig bad_url;
    bad_url.deployments = {d};
    bad_url.shared_state = "memcached://x";
    CHECK_FALSE(Router::create(bad_url));
}

TEST_CASE("16 threads through one router: every call answered") {
    CountingMock a, b;
    RouterConfig config;
    config.strategy = RouteStrategy::least_busy;
    config.deployments = {a.deployment("a"), b.deployment("b")};
    config.deployments[0].max_concurrency = 4;
    auto router = router_of(config);
    std::atomic<int> answered{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i)
                if (router->chat(hello(i % 2 == 0), {}, [](const Delta&) { return true; }))
                    ++answered;
        });
    for (auto& t : threads) t.join();
    CHECK(answered == 160);
    CHECK(a.requests + b.requests == 160);
}

TEST_CASE("shared state in Redis: two routers share one budget and one cooldown") {
    nous::test::RedisServer redis;
    ManualClock clock;
    CountingMock a, b;
    RouterConfig config;
    config.deployments = {a.deployment("a"), b.deployment("b")};
    config.deployments[0].rpm = 3;
    config.deployments[1].weight = 0;
    config.shared_state = redis.url();
    config.now = clock.fn();
    auto first = router_of(config), second = router_of(config);
    RouteReport report;
    for (int i = 0; i < 4; ++i) {
        REQUIRE((i % 2 ? second : first)->chat(hello(false), {}, {}, &report));
        CHECK(report.deployment == (i < 3 ? "a" : "b"));
    }
    CHECK(a.requests == 3);  // alone, each would have sent it 3

    // Token reservations settled by the real usage, in Redis: the settle of
    // a success is sent without waiting for its answer, and still lands.
    CountingMock t;
    RouterConfig tokens;
    tokens.deployments = {t.deployment("t"), b.deployment("b2")};
    tokens.deployments[0].tpm = 2'500;
    tokens.deployments[1].weight = 0;
    tokens.shared_state = redis.url();
    tokens.now = clock.fn();
    auto settled = router_of(tokens);
    ChatRequest big = hello(false);
    big.max_tokens = 1000;
    for (int i = 0; i < 6; ++i) {
        REQUIRE(settled->chat(big, {}, {}, &report));
        CHECK(report.deployment == "t");
    }

    // A cooldown one router sets, the other honours.
    CountingMock failing(faulty("server_error")), healthy;
    RouterConfig cooling;
    cooling.deployments = {failing.deployment("f"), healthy.deployment("h")};
    cooling.deployments[1].weight = 0;
    cooling.shared_state = redis.url();
    cooling.now = clock.fn();
    auto one = router_of(cooling), other = router_of(cooling);
    REQUIRE(one->chat(hello(false)));
    REQUIRE(other->chat(hello(false), {}, {}, &report));
    CHECK(failing.requests == 1);
    CHECK(report.attempts.size() == 1);
    CHECK(report.deployment == "h");
}

TEST_CASE("Redis killed mid-run: calls go on, on local counts, and it is logged once") {
    std::mutex mutex;
    std::vector<std::string> logged;
    nous::http::set_log_sink([&](nous::http::LogLevel, std::string_view m) {
        std::lock_guard lock(mutex);
        logged.emplace_back(m);
    });
    nous::test::RedisServer redis;
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("a")};
    config.shared_state = redis.url();
    auto router = router_of(config);
    REQUIRE(router->chat(hello(false)));
    redis.kill();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) REQUIRE(router->chat(hello(false)));
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    CHECK(a.requests == 6);
    nous::http::set_log_sink(nullptr);
    int unreachable = 0;
    for (const auto& m : logged) unreachable += m.find("unreachable") != std::string::npos;
    CHECK(unreachable == 1);
}

TEST_CASE("a Redis that answers nothing costs a call its bounded timeout, then local counts") {
    nous::test::RedisServer redis;
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("a")};
    config.shared_state = redis.url();
    config.shared_state_timeout = 50ms;
    auto router = router_of(config);
    REQUIRE(router->chat(hello(false)));  // connected, scripts loaded
    redis.pause();
    for (int i = 0; i < 3; ++i) {
        const auto start = std::chrono::steady_clock::now();
        REQUIRE(router->chat(hello(false)));
        // The first waits out one 50 ms command; the others skip Redis for a second.
        CHECK(std::chrono::steady_clock::now() - start < 2s);
    }
    redis.resume();
    CHECK(a.requests == 4);
}

// --- Findings of the router's review: each named after what a user saw. ---

namespace {

using nous::llm::detail::LocalLimits;
using nous::llm::detail::minute_of;
using nous::llm::detail::Outcome;
using nous::llm::detail::Reservation;

/// Logged lines, gathered for one test (the sink reset on the way out).
struct LogCapture {
    std::mutex mutex;
    std::vector<std::string> lines;
    LogCapture() {
        nous::http::set_log_level(nous::http::LogLevel::warning);
        nous::http::set_log_sink([this](nous::http::LogLevel, std::string_view m) {
            std::lock_guard lock(mutex);
            lines.emplace_back(m);
        });
    }
    ~LogCapture() { nous::http::set_log_sink(nullptr); }
    int count(const std::string& needle) {
        std::lock_guard lock(mutex);
        int n = 0;
        for (const auto& l : lines) n += l.find(needle) != std::string::npos;
        return n;
    }
    std::string all() {
        std::lock_guard lock(mutex);
        std::string out;
        for (const auto& l : lines) out += l + "\n";
        return out;
    }
};

/// A call reserved 1000 tokens at 0:59 of minute M and ended at 1:02 with a
/// correction of -980, after another call reserved 1000 in minute M+1.
/// `reserve`/`settle` are the store's; returns what M+1 then takes.
template <typename Store>
std::vector<Reservation::Kind> a_call_across_a_minute(Store& store) {
    const auto m = std::chrono::system_clock::time_point(std::chrono::minutes(29'000'000));
    std::vector<Reservation::Kind> kinds;
    REQUIRE(store.reserve(0, 1000, m + 59s)->kind == Reservation::Kind::reserved);
    REQUIRE(store.reserve(0, 1000, m + 61s)->kind == Reservation::Kind::reserved);
    Outcome done;
    done.token_correction = -980;
    done.window_minute = minute_of(m + 59s);
    store.settle(0, done, m + 62s);
    for (auto at : {m + 63s, m + 64s}) kinds.push_back(store.reserve(0, 1000, at)->kind);
    return kinds;
}

/// LocalLimits answers a Reservation, RedisLimits an optional one: one shape for both.
struct LocalStore {
    LocalLimits limits;
    std::optional<Reservation> reserve(std::size_t i, std::int64_t e,
                                       nous::llm::detail::SystemTime t) {
        return limits.reserve(i, e, t);
    }
    void settle(std::size_t i, const Outcome& o, nous::llm::detail::SystemTime t) {
        limits.settle(i, o, t);
    }
};

}  // namespace

TEST_CASE(
    "the token correction lands in the minute of its reservation, not the call's end (local)") {
    LocalStore store{LocalLimits({{"a", 0, 2'100}})};
    // M+1 holds its own reservation (1000): one more fits, a second does not.
    // Corrected in M+1, it would hold 20, and two more would fit (3000 of 2100).
    CHECK(a_call_across_a_minute(store) ==
          std::vector{Reservation::Kind::reserved, Reservation::Kind::no_budget});
}

TEST_CASE(
    "the token correction lands in the minute of its reservation, not the call's end (Redis)") {
    nous::test::RedisServer redis;
    std::string why;
    auto store =
        nous::llm::detail::RedisLimits::create(redis.url(), {{"a", 0, 2'100}}, 1000ms, why);
    REQUIRE(store);
    CHECK(a_call_across_a_minute(*store) ==
          std::vector{Reservation::Kind::reserved, Reservation::Kind::no_budget});
}

TEST_CASE("a callback that throws releases the deployment's in-flight slot") {
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("a")};
    config.deployments[0].max_concurrency = 1;
    config.queue_timeout = 0ms;
    auto router = router_of(config);
    const auto throwing = [](const Delta&) -> bool { throw std::runtime_error("the app's own"); };
    for (int i = 0; i < 3; ++i)
        CHECK_THROWS_AS(router->chat(hello(), {}, throwing), std::runtime_error);
    auto after = router->chat(hello(false));  // not `saturated`: the slot came back each time
    REQUIRE(after);
    CHECK(a.requests == 4);
}

TEST_CASE("a full max_concurrency waits for a call to end, even with the fallback out for longer") {
    ManualClock clock;  // 10 s into a minute: the fallback's budget is back in 50 s
    CountingMock a, b;
    RouterConfig config;
    config.deployments = {a.deployment("primary"), b.deployment("fallback")};
    config.deployments[0].max_concurrency = 1;
    config.deployments[1].weight = 0;
    config.deployments[1].tpm = 10;  // below any call's estimate: no budget this minute
    config.queue_timeout = 10s;
    config.now = clock.fn();
    auto router = router_of(config);

    std::optional<Result<ChatResult>> second;
    std::atomic<bool> second_done{false};
    std::thread other;
    bool first_delta = true;
    auto first = router->chat(hello(), {}, [&](const Delta&) {
        if (!first_delta) return true;
        first_delta = false;
        // The primary's one slot is this call's: another call must wait for it.
        other = std::thread([&] {
            second = router->chat(hello(false));
            second_done = true;
        });
        while (nous::llm::detail::RouterAccess::waiting(*router) == 0 && !second_done)
            std::this_thread::yield();
        return true;
    });
    other.join();
    REQUIRE(first);
    REQUIRE(second);
    INFO((*second ? std::string() : second->error().message));
    REQUIRE(*second);
    CHECK(a.requests == 2);
    CHECK(b.requests == 0);
}

TEST_CASE("a call waiting for a deployment sleeps until woken, and a cancel ends the wait") {
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("only")};
    config.deployments[0].max_concurrency = 1;
    config.queue_timeout = 120s;  // the cancel, not the deadline, ends the wait
    auto router = router_of(config);

    // The deployment's one slot is held by a call parked in its callback.
    std::mutex mutex;
    std::condition_variable changed;
    bool holding = false, let_go = false;
    std::thread holder([&] {
        auto held = router->chat(hello(), {}, [&](const Delta&) {
            std::unique_lock lock(mutex);
            holding = true;
            changed.notify_all();
            changed.wait(lock, [&] { return let_go; });
            return true;
        });
        (void)held;
    });
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return holding; });
    }
    const auto seen = nous::test::cancel_while_asleep([&](const nous::http::CancelToken& token) {
        nous::http::Options options;
        options.cancel = &token;
        auto result = router->chat(hello(), options);
        return !result && result.error().code == nous::http::ErrorCode::cancelled;
    });
    {
        std::lock_guard lock(mutex);
        let_go = true;
    }
    changed.notify_all();
    holder.join();
    CHECK(seen.asleep);
    // Asleep until woken: with 50 ms slices it slept four times in 200 ms.
    CHECK(seen.sleeps <= 2);
    CHECK_FALSE(seen.woke_early);
    CHECK(seen.ended);
    CHECK(seen.cancelled);
}

TEST_CASE("a Redis password: AUTH sent, the counts shared, the password never printed") {
    const std::string password = "s3cret-Pa55";
    nous::test::RedisServer redis({"--requirepass", password});
    LogCapture log;
    CountingMock a, b;
    const std::string where = "127.0.0.1:" + std::to_string(redis.port()) + "/0";
    for (const std::string& userinfo : {":" + password + "@", "default:" + password + "@"}) {
        RouterConfig config;
        config.deployments = {a.deployment("a" + std::to_string(userinfo.size())),
                              b.deployment("b")};
        config.deployments[0].rpm = 2;
        config.deployments[1].weight = 0;
        config.shared_state = "redis://" + userinfo + where;
        auto first = router_of(config), second = router_of(config);
        RouteReport report;
        for (int i = 0; i < 3; ++i) {
            REQUIRE((i % 2 ? second : first)->chat(hello(false), {}, {}, &report));
            CHECK(report.deployment == (i < 2 ? config.deployments[0].name : "b"));
        }
    }
    CHECK(a.requests == 4);  // 2 a router pair: shared, not 2 each
    CHECK(log.all().find(password) == std::string::npos);
    CHECK(log.count("unreachable") == 0);

    // A bad port in such a URL: refused, the password not in the message.
    RouterConfig bad;
    bad.deployments = {a.deployment("a")};
    bad.shared_state = "redis://:" + password + "@127.0.0.1:99999/0";
    auto refused = Router::create(bad);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("redis://:***@127.0.0.1:99999/0"));
    CHECK(refused.error().message.find(password) == std::string::npos);
}

TEST_CASE("a Redis that wants a password says so in its own words (NOAUTH, WRONGPASS)") {
    const std::string password = "s3cret-Pa55";
    nous::test::RedisServer redis({"--requirepass", password});
    CountingMock a;
    for (const auto& [url, words] : std::vector<std::pair<std::string, std::string>>{
             {redis.url(), "NOAUTH"},
             {"redis://:wrong-" + password + "@127.0.0.1:" + std::to_string(redis.port()),
              "WRONGPASS"}}) {
        LogCapture log;
        RouterConfig config;
        config.deployments = {a.deployment("a")};
        config.shared_state = url;
        auto router = router_of(config);
        REQUIRE(router->chat(hello(false)));  // on local counts
        INFO(log.all());
        CHECK(log.count("refused the command (" + words) == 1);
        CHECK(log.all().find("()") == std::string::npos);
        CHECK(log.all().find(password) == std::string::npos);
    }
}

TEST_CASE("a paused Redis is not said to answer again until it answers a command") {
    nous::test::RedisServer redis;
    LogCapture log;
    CountingMock a;
    RouterConfig config;
    config.deployments = {a.deployment("a")};
    config.shared_state = redis.url();
    config.shared_state_timeout = 50ms;
    auto router = router_of(config);
    REQUIRE(router->chat(hello(false)));
    redis.pause();
    // Past the one-second pause between tries, twice: each try connects (the
    // kernel accepts into a stopped server's backlog) and gets no answer.
    const auto until = std::chrono::steady_clock::now() + 2500ms;
    while (std::chrono::steady_clock::now() < until) REQUIRE(router->chat(hello(false)));
    INFO(log.all());
    CHECK(log.count("unreachable") == 1);
    CHECK(log.count("answers again") == 0);
    redis.resume();
    const auto back = std::chrono::steady_clock::now() + 5s;
    while (log.count("answers again") == 0 && std::chrono::steady_clock::now() < back)
        REQUIRE(router->chat(hello(false)));
    CHECK(log.count("answers again") == 1);
}

TEST_CASE(
    "a conversation begun on Gemini goes on on OpenAI and Anthropic: its call ids made to fit") {
    // Gemini's calls carry our ids, "call_N_" and the tool's name: with a
    // 40-byte name that is past OpenAI chat's 40 bytes, which the mock
    // refuses as OpenAI does. A failover must not end the conversation.
    MockServer server;
    server.start();
    const std::string name = "get_the_weather_for_a_city_by_name_today";
    ChatRequest r;
    r.provider = Provider::gemini;
    r.base_url = server.base_url() + "/v1beta";
    r.model = "mock-1";
    r.stream = false;
    r.messages = {ChatMessage::user("weather in Paris?")};
    r.tools = {{name, "the weather", R"({"type":"object","properties":{}})"}};
    auto first = run_chat(r);
    REQUIRE(first);
    REQUIRE(first->tool_calls.size() == 1);
    const std::string id = first->tool_calls[0].id;
    CHECK(id.size() > 40);
    r.messages.push_back(first->message());
    r.messages.push_back(ChatMessage::tool_result(id, R"({"celsius":21})"));
    for (Provider next : {Provider::openai, Provider::openai_responses, Provider::anthropic}) {
        INFO(to_string(next));
        ChatRequest on = r;
        on.provider = next;
        on.base_url = server.base_url() + "/v1";
        auto answer = run_chat(on);
        REQUIRE(answer);
        CHECK_FALSE(answer->text.empty());
        CHECK(on.messages[1].tool_calls[0].id == id);  // the caller's conversation as it was
    }
}
