// The retry policy, with injected clock, sleeper and randomness so that the
// exact delays asked for are asserted (no test waits for real).

#include "core/retry.hpp"

#include <catch2/catch.hpp>
#include <mutex>

#include "codec/retry_hint.hpp"
#include "nous/http/client.hpp"
#include "nous/http/testing.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

/// A clock the retry policy sleeps on without waiting, recording each sleep.
struct FakeTime {
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
    std::vector<Milliseconds> sleeps;
    testing::Hooks hooks;
    FakeTime() {
        hooks.now = [this] { return now; };
        hooks.sleep = [this](Milliseconds d) {
            sleeps.push_back(d);
            now += d;
        };
        hooks.random = [] { return 0.5; };
    }
    FakeTime(const FakeTime&) = delete;
    FakeTime& operator=(const FakeTime&) = delete;
    /// Options whose retry policy runs on this clock.
    Options options() const {
        Options o;
        o.test_hooks = &hooks;
        return o;
    }
};

/// Answers with the scripted statuses in order, then 200.
struct ScriptedServer {
    MockServer server;
    std::mutex mutex;
    std::vector<MockResponse> script;
    std::size_t next = 0;
    std::size_t seen = 0;
    explicit ScriptedServer(std::vector<MockResponse> s) : script(std::move(s)) {
        server.set_handler([this](const MockRequest&, MockResponse& r) {
            std::lock_guard lock(mutex);
            ++seen;
            if (next < script.size()) {
                r = script[next++];
            } else {
                r.body = R"({"ok":true})";
            }
            return true;
        });
        server.start();
    }
};

MockResponse status(int code, std::vector<std::pair<std::string, std::string>> headers = {},
                    std::string body = "{}") {
    MockResponse r;
    r.status = code;
    r.headers = std::move(headers);
    r.body = std::move(body);
    return r;
}

}  // namespace

TEST_CASE("backoff is 0.5 s * 2^n capped at 8 s with jitter between 0.75 and 1") {
    using detail::backoff_delay;
    CHECK(backoff_delay(0, 0.0) == 500ms);
    CHECK(backoff_delay(0, 0.5) == 437ms);
    CHECK(backoff_delay(1, 0.0) == 1000ms);
    CHECK(backoff_delay(3, 0.0) == 4000ms);
    CHECK(backoff_delay(4, 0.0) == 8000ms);
    CHECK(backoff_delay(9, 0.0) == 8000ms);
    CHECK(backoff_delay(9, 0.999) > 6000ms);
}

TEST_CASE("retry hints: retry-after-ms, Retry-After seconds and HTTP-date, Google RetryInfo") {
    using detail::parse_retry_hint;
    CHECK(parse_retry_hint({{"retry-after", "42"}}, "") == Milliseconds(42000));
    CHECK(parse_retry_hint({{"retry-after", "1.5"}}, "") == Milliseconds(1500));
    CHECK(parse_retry_hint({{"retry-after-ms", "250"}, {"retry-after", "9"}}, "") ==
          Milliseconds(250));
    CHECK(
        parse_retry_hint(
            {},
            R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}})") ==
        Milliseconds(7000));
    CHECK(parse_retry_hint({}, R"([{"error":{"details":[{"retryDelay":"1.500s"}]}}])") ==
          Milliseconds(1500));
    CHECK_FALSE(parse_retry_hint({{"retry-after", "soon"}}, "not json").has_value());
    CHECK(parse_retry_hint({{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}}, "") ==
          Milliseconds(0));
    // A date 30 s ahead parses to about 30 s.
    std::time_t ahead = std::time(nullptr) + 30;
    char date[64];
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&ahead));
    auto hint = parse_retry_hint({{"retry-after", date}}, "");
    REQUIRE(hint.has_value());
    CHECK(*hint > 28s);
    CHECK(*hint <= 30s);
}

TEST_CASE("429 with Retry-After then 200 succeeds after exactly the hinted delay") {
    ScriptedServer s({status(429, {{"Retry-After", "2"}}, R"({"error":{"message":"slow down"}})")});
    FakeTime time;
    Options o = time.options();
    auto r = post(s.server.base_url() + "/v1/chat/completions", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == R"({"ok":true})");
    CHECK(time.sleeps == std::vector<Milliseconds>{2000ms});
    CHECK(s.seen == 2);
}

TEST_CASE("5xx without a hint backs off exponentially, then gives up after max_retries") {
    ScriptedServer s({status(503), status(502), status(500), status(500)});
    FakeTime time;
    Options o = time.options();
    auto r = post(s.server.base_url() + "/x", "{}", {}, o);  // default max_retries = 2
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::http_status);
    CHECK(r.error().status == 500);
    CHECK(time.sleeps == std::vector<Milliseconds>{437ms, 875ms});
    CHECK(s.seen == 3);
}

TEST_CASE("a hint longer than 60 s returns the error at once with retry_after set") {
    ScriptedServer s({status(429, {{"retry-after", "120"}})});
    FakeTime time;
    Options o = time.options();
    auto r = post(s.server.base_url() + "/x", "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 429);
    CHECK(r.error().retry_after == Milliseconds(120000));
    CHECK(time.sleeps.empty());
    CHECK(s.seen == 1);
}

TEST_CASE("no retry past the total deadline, none for 4xx, none with max_retries 0") {
    FakeTime time;
    {
        ScriptedServer s({status(429, {{"retry-after", "5"}})});
        Options o = time.options();
        o.total_timeout = 3000ms;
        auto r = post(s.server.base_url() + "/x", "{}", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 429);
        CHECK(s.seen == 1);
    }
    {
        ScriptedServer s({status(400, {}, R"({"error":{"message":"bad"}})")});
        Options o = time.options();
        auto r = post(s.server.base_url() + "/x", "{}", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 400);
        CHECK(r.error().body == R"({"error":{"message":"bad"}})");
        CHECK(s.seen == 1);
    }
    {
        ScriptedServer s({status(503)});
        Options o = time.options();
        o.max_retries = 0;
        auto r = post(s.server.base_url() + "/x", "{}", {}, o);
        CHECK_FALSE(r.ok());
        CHECK(s.seen == 1);
    }
    CHECK(time.sleeps.empty());
}

TEST_CASE("connection refused is retried max_retries times") {
    FakeTime time;
    Options o = time.options();
    o.max_retries = 3;
    auto r = post("http://127.0.0.1:1/x", "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::connect_failed);
    CHECK(time.sleeps == std::vector<Milliseconds>{437ms, 875ms, 1750ms});
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

TEST_CASE(
    "HTTP-date parsing depends on the locale and knows one form: all three RFC 9110 forms parse") {
    const long long expected = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
    CHECK(detail::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == expected);
    CHECK(detail::parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == expected);
    CHECK(detail::parse_http_date("Sun Nov  6 08:49:37 1994") == expected);
    CHECK_FALSE(detail::parse_http_date("Sun, 06 Nov 1994 08:49:37 CET"));
    CHECK_FALSE(detail::parse_http_date("tomorrow"));
    // A date in the past is "retry now".
    CHECK(detail::parse_retry_hint({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, "") ==
          Milliseconds(0));
}

// ---- quota versus rate, and the server's own word --------------------------

namespace {
// The providers' documented error bodies for an exhausted quota.
const char* const kOpenAiQuota =
    R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.",)"
    R"("type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
const char* const kGeminiPerDay =
    R"({"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",)"
    R"("details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{)"
    R"("quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests",)"
    R"("quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"model":"gemini-2.0-flash"},)"
    R"("quotaValue":"200"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"42s"}]}})";
const char* const kGeminiPerMinute =
    R"({"error":{"code":429,"message":"Resource has been exhausted.","status":"RESOURCE_EXHAUSTED",)"
    R"("details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{)"
    R"("quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},)"
    R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}})";
const char* const kAnthropicBilling =
    R"({"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low."}})";
const char* const kOpenAiRate =
    R"({"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}})";
}  // namespace

TEST_CASE("an exhausted quota is told apart from a rate limit in the documented bodies") {
    CHECK(detail::says_quota_exhausted(kOpenAiQuota));
    CHECK(detail::says_quota_exhausted(kGeminiPerDay));
    CHECK(detail::says_quota_exhausted(kAnthropicBilling));
    CHECK(detail::says_quota_exhausted(std::string("[") + kGeminiPerDay +
                                       "]"));  // Gemini's array wrapping
    CHECK_FALSE(detail::says_quota_exhausted(kGeminiPerMinute));
    CHECK_FALSE(detail::says_quota_exhausted(kOpenAiRate));
    CHECK_FALSE(detail::says_quota_exhausted("not json"));
    CHECK_FALSE(detail::says_quota_exhausted(std::string(200 * 1024, '[')));
}

TEST_CASE("a 429 for an exhausted quota is never retried, a rate limit is, after its hint") {
    for (const char* body : {kOpenAiQuota, kGeminiPerDay, kAnthropicBilling}) {
        INFO(body);
        ScriptedServer s({status(429, {{"x-request-id", "req_quota"}}, body)});
        FakeTime time;
        Options o = time.options();
        o.max_retries = 5;
        auto r = post(s.server.base_url() + "/v1/chat/completions", "{}", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::http_status);
        CHECK(r.error().quota_exhausted);
        CHECK(r.error().request_id == "req_quota");
        CHECK(s.seen == 1);
        CHECK(time.sleeps.empty());
    }
    ScriptedServer rate({status(429, {{"retry-after", "3"}}, kGeminiPerMinute)});
    FakeTime time;
    Options o = time.options();
    auto r = post(rate.server.base_url() + "/v1/chat/completions", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(rate.seen == 2);
    CHECK(time.sleeps == std::vector<Milliseconds>{3000ms});
}

TEST_CASE("x-should-retry from the server wins over the status rules, both ways") {
    {
        ScriptedServer s({status(503, {{"x-should-retry", "false"}})});
        FakeTime time;
        Options o = time.options();
        auto r = post(s.server.base_url() + "/x", "{}", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 503);
        CHECK(s.seen == 1);
    }
    {
        ScriptedServer s({status(400, {{"x-should-retry", "true"}})});
        FakeTime time;
        Options o = time.options();
        auto r = post(s.server.base_url() + "/x", "{}", {}, o);
        REQUIRE(r.ok());
        CHECK(s.seen == 2);
    }
}

TEST_CASE(
    "the request id of a response and of an error: x-request-id, Anthropic request-id, OpenRouter "
    "x-generation-id") {
    CHECK(request_id_of({{"x-request-id", "req_1"}}) == "req_1");
    CHECK(request_id_of({{"request-id", "req_01A"}}) == "req_01A");
    CHECK(request_id_of({{"x-generation-id", "gen-9"}}) == "gen-9");
    CHECK(request_id_of({{"request-id", "b"}, {"X-Request-Id", "a"}}) == "a");
    CHECK(request_id_of({}).empty());
    // A header value may hold any byte; the id is written into JSON (nouscli
    // chat --json, OTLP spans), so what is not printable ASCII is '?'.
    CHECK(request_id_of({{"x-request-id",
                          "req\xff\xfe\x01"
                          "1"}}) == "req???1");
    ScriptedServer s({status(500, {{"request-id", "req_err"}})});
    Options o;
    o.max_retries = 0;
    auto failed = post(s.server.base_url() + "/x", "{}", {}, o);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().request_id == "req_err");
    MockServer plain;
    plain.set_handler([](const MockRequest&, MockResponse& r) {
        r.headers.emplace_back("x-request-id", "req_ok");
        r.body = "{}";
        return true;
    });
    plain.start();
    auto ok = post(plain.base_url() + "/x", "{}", {}, o);
    REQUIRE(ok.ok());
    CHECK(ok->request_id == "req_ok");
}
