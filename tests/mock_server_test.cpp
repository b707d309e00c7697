#include <catch2/catch.hpp>
#include <atomic>
#include <thread>

#include "nous/http/client.hpp"
#include "nous/http/json.hpp"
#include "nous/http/mock_server.hpp"

using namespace nous::http;

TEST_CASE("mock server: chat completion JSON, models, small and large bodies") {
    MockServer server;
    server.start();
    auto r = post(server.base_url() + "/v1/chat/completions", R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})");
    REQUIRE(r.ok());
    auto doc = parse_json(r->body);
    REQUIRE(doc.ok());
    auto& d = *doc.value();
    CHECK(std::string(d["model"].GetString()) == "gpt-x");
    CHECK(std::string(d["choices"][0]["message"]["content"].GetString()).find("mock server") != std::string::npos);
    CHECK(post(server.base_url() + "/small", "{}")->body.size() == 1024);
    CHECK(post(server.base_url() + "/large", "{}")->body.size() == 256 * 1024);
    auto bad = post(server.base_url() + "/v1/chat/completions", "not json", {}, Options{});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().status == 400);
}

TEST_CASE("mock server: a streaming completion is SSE, chunked, ending with DONE") {
    MockServerOptions o;
    o.stream_tokens = 5;
    MockServer server(o);
    server.start();
    auto r = post(server.base_url() + "/v1/chat/completions", R"({"model":"m","stream":true,"messages":[]})");
    REQUIRE(r.ok());
    CHECK(r->header("content-type") == std::optional<std::string_view>("text/event-stream"));
    std::size_t events = 0, at = 0;
    while ((at = r->body.find("data: ", at)) != std::string::npos) {
        ++events;
        at += 6;
    }
    CHECK(events == 7);  // 5 tokens, the finish chunk, [DONE]
    CHECK(r->body.size() >= 14);
    CHECK(r->body.substr(r->body.size() - 14) == "data: [DONE]\n\n");
}

TEST_CASE("mock server: 64 concurrent keep-alive connections are all served") {
    MockServer server;
    server.start();
    constexpr int clients = 64;
    std::atomic<int> ok{0};
    std::atomic<int> arrived{0};
    std::vector<std::thread> threads;
    // Each client holds its own pooled connection: 64 requests in flight at once at the barrier.
    for (int t = 0; t < clients; ++t)
        threads.emplace_back([&] {
            ++arrived;
            while (arrived < clients) std::this_thread::yield();
            for (int i = 0; i < 5; ++i) ok += post(server.base_url() + "/small", "{}").ok();
        });
    for (auto& t : threads) t.join();
    CHECK(ok == clients * 5);
    CHECK(server.connections_accepted() <= 64);
    CHECK(server.requests_served() == clients * 5);
}

TEST_CASE("mock server: the nagle switch still serves correct bodies") {
    MockServerOptions o;
    o.nagle = true;
    MockServer server(o);
    server.start();
    for (int i = 0; i < 5; ++i) {
        auto r = post(server.base_url() + "/small", "{}");
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
    }
    CHECK(server.connections_accepted() == 1);
}
