// One allocation for a Content-Length body: socket reads land straight in a
// buffer reserved from Content-Length (counted with a replaced operator new).

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "fault_server.hpp"
#include "nous/http/client.hpp"
#include "nous/llm/chat.hpp"
#include "nous/mock/mock_server.hpp"

namespace {
thread_local bool counting = false;  // only the calling thread's allocations
std::atomic<std::size_t> threshold{0};
std::atomic<int> big_allocations{0};

/// Allocations made by this thread during one streamed run_chat of a mock
/// sending `tokens` tokens (pull backend: the calling thread reads the socket,
/// decodes the events and parses the deltas, so every per-token step counts).
int allocations_of_chat(nous::llm::Provider provider, int tokens) {
    nous::http::MockServerOptions mock;
    mock.stream_tokens = tokens;
    nous::http::MockServer server(mock);
    server.start();
    nous::llm::ChatRequest request;
    request.provider = provider;
    request.base_url =
        server.base_url() + (provider == nous::llm::Provider::gemini ? "/v1beta" : "/v1");
    request.model = "mock-1";
    request.messages.push_back(nous::llm::ChatMessage::user("Tell me a story."));
    nous::http::Options options;
    options.stream_backend = "pull";
    options.max_retries = 0;
    int text_deltas = 0;
    threshold = 0;
    big_allocations = 0;
    counting = true;
    auto result = nous::llm::run_chat(request, options, [&](const nous::llm::Delta& d) {
        text_deltas += !d.text.empty();
        return true;
    });
    counting = false;
    REQUIRE(result);
    CHECK(text_deltas == tokens);
    return big_allocations.load();
}
}  // namespace

void* operator new(std::size_t size) {
    if (counting && size >= threshold.load(std::memory_order_relaxed))
        big_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

TEST_CASE("a 256 KiB Content-Length body costs exactly one body-sized allocation") {
    using namespace nous::http;
    MockServer server;
    server.start();
    REQUIRE(post(server.base_url() + "/large", "{}").ok());  // warm: connection and pool exist
    threshold = 256 * 1024;
    big_allocations = 0;
    counting = true;
    auto r = post(server.base_url() + "/large", "{}");
    counting = false;
    REQUIRE(r.ok());
    CHECK(r->body.size() == 256 * 1024);
    CHECK(r->body == MockServer::large_body());
    // Only this thread's allocations count: the in-process server allocates too.
    CHECK(big_allocations == 1);
}

TEST_CASE("a 1 MiB chunked body grows geometrically, not per chunk") {
    using namespace nous::http;
    // 1 MiB in 1 KiB chunks: per-chunk growth would reallocate ~1000 times.
    std::string response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 1024; ++i)
        response += "400\r\n" + std::string(1024, static_cast<char>('a' + i % 26)) + "\r\n";
    response += "0\r\n\r\n";
    nous::test::FaultServer chunked([&](nous::test::Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(response);
    });
    REQUIRE(post(chunked.url(), "{}").ok());  // warm
    threshold = 64 * 1024;
    big_allocations = 0;
    counting = true;
    auto r = post(chunked.url(), "{}");
    counting = false;
    REQUIRE(r.ok());
    CHECK(r->body.size() == 1024 * 1024);
    CHECK(big_allocations <= 8);  // 64K, 128K, ... 2M: doubling
    CHECK(big_allocations >= 1);
}

TEST_CASE("a streamed chat allocates nothing per token in steady state, in every format") {
    using nous::llm::Provider;
    for (Provider provider :
         {Provider::openai, Provider::openai_responses, Provider::anthropic, Provider::gemini}) {
        CAPTURE(nous::llm::to_string(provider));
        const int few = allocations_of_chat(provider, 50);
        const int many = allocations_of_chat(provider, 2050);
        // 2,000 tokens more: an allocation per token (a Delta's string, a
        // piece, an event copy) would add thousands. What may grow is the
        // message text and the read pieces, geometrically: a handful.
        CHECK(many - few <= 40);
        CHECK(few > 0);  // the counter counts: the call itself allocates
    }
}
