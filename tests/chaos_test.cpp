// The post and stream contracts through a misbehaving TCP proxy (delays,
// 1-byte writes, a reset at byte K, a stall), and fail-at-K loops over a TLS
// connect and a proxy CONNECT: each K gives a typed error, no stream or pool
// slot is lost, and the next call works.

#include <catch2/catch.hpp>
#include <cstdlib>

#include "chaos_proxy.hpp"
#include "fault_server.hpp"
#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "proxy_server.hpp"
#include "test_helpers.hpp"
#include "tls_fixture.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

const std::string kBody = std::string(3000, 'b') + "end";
const std::string kEvents =
    "event: delta\nid: 7\ndata: {\"t\":\"a\"}\n\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n";

/// Answers /post with kBody (Content-Length) and /stream with kEvents (chunked SSE).
FaultServer origin_server() {
    return FaultServer(
        [](Peer& peer, std::uint64_t) {
            std::string head;
            while (peer.read_request(&head)) {
                if (head.rfind("POST /stream", 0) == 0) {
                    peer.send(kSseHead + chunk(kEvents.substr(0, 11)) + chunk(kEvents.substr(11)) +
                              "0\r\n\r\n");
                } else {
                    peer.send(ok_response(kBody));
                }
            }
        },
        64);
}

Options quick() {
    Options o;
    o.max_retries = 0;
    o.connect_timeout = 2s;
    o.read_timeout = 2s;
    return o;
}

bool is_typed_failure(ErrorCode code) {
    return code == ErrorCode::connect_failed || code == ErrorCode::connection_closed ||
           code == ErrorCode::truncated || code == ErrorCode::tls_failed ||
           code == ErrorCode::timeout_read || code == ErrorCode::timeout_connect ||
           code == ErrorCode::protocol;
}

}  // namespace

TEST_CASE("the post and stream contracts hold through 1-byte writes and delays") {
    auto origin = origin_server();
    for (ChaosSettings settings :
         {ChaosSettings{1, 0ms, 0, 0}, ChaosSettings{7, 1ms, 0, 0}, ChaosSettings{0, 2ms, 0, 0}}) {
        CAPTURE(settings.split, settings.delay.count());
        ChaosProxy chaos(origin.port(), settings);
        auto r = post(chaos.url("http://127.0.0.1", "/post"), "{}", {}, quick());
        REQUIRE(r.ok());
        CHECK(r->body == kBody);
        for (const char* backend : {"window", "pull"}) {
            Options o = quick();
            o.stream_backend = backend;
            Stream s = stream(chaos.url("http://127.0.0.1", "/stream"), "{}", {}, o);
            auto items = drain(s);
            REQUIRE(items.size() == 3);
            CHECK(items[0].event.type == "delta");
            CHECK(items[0].event.id == "7");
            CHECK(items[1].event.data == "line1\nline2");
            CHECK(items[2].is_done());
        }
        pool_clear();
    }
}

TEST_CASE(
    "a reset at every byte K of a post and a stream: a typed error, nothing leaked, the next call "
    "works") {
    auto origin = origin_server();
    for (const std::string path : {"/post", "/stream"}) {
        bool succeeded = false;
        for (std::uint64_t k = 1; !succeeded && k < 20000; k += (k < 200 ? 1 : 97)) {
            CAPTURE(path, k);
            ChaosProxy chaos(origin.port(), ChaosSettings{0, 0ms, k, 0});
            const std::string url = chaos.url("http://127.0.0.1", path);
            if (path == "/post") {
                auto r = post(url, "{}", {}, quick());
                if (r.ok()) {
                    CHECK(r->body == kBody);
                    succeeded = true;
                } else {
                    CAPTURE(r.error().message);
                    CHECK(is_typed_failure(r.error().code));
                }
            } else {
                Stream s = stream(url, "{}", {}, quick());
                auto items = drain(s);
                REQUIRE_FALSE(items.empty());
                if (items.back().is_done()) {
                    CHECK(items.size() == 3);
                    succeeded = true;
                } else {
                    REQUIRE(items.back().is_error());
                    CAPTURE(items.back().error->message);
                    CHECK(is_typed_failure(items.back().error->code));
                }
            }
            CHECK(live_streams() == 0);
            pool_clear();
            // The next call, straight to the origin, works.
            auto next = post("http://127.0.0.1:" + std::to_string(origin.port()) + "/post", "{}",
                             {}, quick());
            REQUIRE(next.ok());
        }
        CHECK(succeeded);
    }
}

TEST_CASE("a stall at byte K ends in timeout_read within the idle timeout") {
    auto origin = origin_server();
    for (std::uint64_t k : {std::uint64_t(1), std::uint64_t(40), std::uint64_t(200)}) {
        CAPTURE(k);
        ChaosProxy chaos(origin.port(), ChaosSettings{0, 0ms, 0, k});
        Options o = quick();
        o.read_timeout = 150ms;
        auto r = post(chaos.url("http://127.0.0.1", "/post"), "{}", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::timeout_read);
        Stream s = stream(chaos.url("http://127.0.0.1", "/stream"), "{}", {}, o);
        auto items = drain(s);
        REQUIRE_FALSE(items.empty());
        CHECK(items.back().is_error());
        CHECK(items.back().error->code == ErrorCode::timeout_read);
        pool_clear();
    }
}

TEST_CASE(
    "fail-at-K over a TLS connect: every handshake byte cut gives a typed error, and the next call "
    "works") {
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    Options o = quick();
    o.ca_file = pki.ca_cert;
    const std::string direct = "https://localhost:" + std::to_string(origin.port()) + "/x";
    bool succeeded = false;
    for (std::uint64_t k = 1; !succeeded && k < 100000; k += (k < 64 ? 1 : 37)) {
        CAPTURE(k);
        pool_clear();
        ChaosProxy chaos(origin.port(), ChaosSettings{0, 0ms, k, 0});
        auto r = post(chaos.url("https://localhost", "/x"), "{}", {}, o);
        if (r.ok()) {
            CHECK(r->body == "tls-ok");
            succeeded = true;
        } else {
            CAPTURE(r.error().message);
            CHECK(is_typed_failure(r.error().code));
        }
        auto next = post(direct, "{}", {}, o);
        REQUIRE(next.ok());
    }
    CHECK(succeeded);
}

TEST_CASE(
    "TLS records split into 1-byte and 7-byte writes: every handshake and response record is "
    "reassembled") {
    // Our BIO reads ahead: each recv may end anywhere inside a record, and a
    // record may take many recvs to complete.
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    Options o = quick();
    o.ca_file = pki.ca_cert;
    for (ChaosSettings settings : {ChaosSettings{1, 0ms, 0, 0}, ChaosSettings{7, 1ms, 0, 0}}) {
        CAPTURE(settings.split, settings.delay.count());
        pool_clear();
        ChaosProxy chaos(origin.port(), settings);
        for (int i = 0; i < 3; ++i) {  // a new connection, then kept alive
            auto r = post(chaos.url("https://localhost", "/x"), "{}", {}, o);
            REQUIRE(r.ok());
            CHECK(r->body == "tls-ok");
            CHECK(r->connection_reused == (i > 0));
        }
    }
    pool_clear();
}

TEST_CASE(
    "fail-at-K over a proxy CONNECT: every byte cut gives a typed error, and the next call works") {
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    ProxyServer proxy;
    Options o = quick();
    o.ca_file = pki.ca_cert;
    const std::string url = "https://localhost:" + std::to_string(origin.port()) + "/x";
    bool succeeded = false;
    for (std::uint64_t k = 1; !succeeded && k < 100000; k += (k < 96 ? 1 : 41)) {
        CAPTURE(k);
        pool_clear();
        ChaosProxy chaos(proxy.port(), ChaosSettings{0, 0ms, k, 0});
        {
            ScopedEnv env;
            env.set("https_proxy", chaos.url("http://127.0.0.1", ""));
            auto r = post(url, "{}", {}, o);
            if (r.ok()) {
                CHECK(r->body == "tls-ok");
                succeeded = true;
            } else {
                CAPTURE(r.error().message);
                CHECK(is_typed_failure(r.error().code));
            }
        }
        pool_clear();
        ScopedEnv direct_proxy;
        direct_proxy.set("https_proxy", proxy.url());
        auto next = post(url, "{}", {}, o);
        REQUIRE(next.ok());
    }
    CHECK(succeeded);
}
