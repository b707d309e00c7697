// The pooled backend: keep-alive reuse, stale connections, the resend rule,
// the per-origin cap, and the fast write path.

#include <sys/resource.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cancel.hpp"
#include "fault_server.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "nous/mock/mock_server.hpp"
#include "sleeping_wait.hpp"
#include "test_helpers.hpp"
#include "transport/io_counters.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

TEST_CASE("one TCP connection serves N sequential posts, and the counters say reused") {
    MockServer server;
    server.start();
    auto before = pool_stats();
    for (int i = 0; i < 25; ++i) {
        auto r = post(server.base_url() + "/small", R"({"hello":"a"})");
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
        CHECK(r->connection_reused == (i > 0));
    }
    auto after = pool_stats();
    CHECK(server.connections_accepted() == 1);
    CHECK(after.connections_created - before.connections_created == 1);
    CHECK(after.connections_reused - before.connections_reused == 24);
}

TEST_CASE("a server that closed an idle keep-alive connection costs no failed request") {
    std::atomic<int> closed{0};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(ok_response("first"));  // keep-alive response...
        peer.close_write();               // ...then the server drops the idle connection
        ++closed;
    });
    REQUIRE(post(server.url(), "{}")->body == "first");
    REQUIRE(wait_until([&] { return closed.load() == 1; }));
    // The FIN may still be in flight on loopback; wait until the client's socket sees it.
    auto before = pool_stats();
    auto r = post(server.url(), "{}");
    REQUIRE(r.ok());
    CHECK(r->body == "first");
    auto after = pool_stats();
    CHECK(server.connections() == 2);
    // Found stale by the probe, or (if the FIN raced the probe) resent: either way counted.
    CHECK((after.stale_discarded - before.stale_discarded) + (after.resent - before.resent) >= 1);
}

TEST_CASE("a reused connection that dies before any response byte is resent once, transparently") {
    FaultServer server([](Peer& peer, std::uint64_t index) {
        if (index == 0) {
            if (!peer.read_request()) return;
            peer.send(ok_response("one"));
            if (!peer.read_request())
                return;    // the second request arrives on the kept-alive connection...
            peer.reset();  // ...and the server drops it without a byte of answer
            return;
        }
        while (peer.read_request()) peer.send(ok_response("fresh"));
    });
    Options o;
    o.max_retries = 0;  // the resend is not the retry policy's
    REQUIRE(post(server.url(), "{}", {}, o)->body == "one");
    auto before = pool_stats();
    auto r = post(server.url(), "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == "fresh");
    CHECK_FALSE(r->connection_reused);
    CHECK(pool_stats().resent - before.resent == 1);
    CHECK(server.connections() == 2);
}

namespace {
/// Answers the first request on connection 0, then reads the second whole and
/// closes without a byte of answer (a gateway that gave up during a long
/// completion); later connections answer "fresh". Every request head is kept.
struct ReadThenCloseServer {
    std::mutex mutex;
    std::vector<std::string> heads;  ///< guarded by mutex
    FaultServer server{[this](Peer& peer, std::uint64_t index) {
        std::string head;
        while (peer.read_request(&head)) {
            {
                std::lock_guard lock(mutex);
                heads.push_back(head);
            }
            if (index == 0 && peer.requests_read() == 2) {
                peer.close_write();
                return;
            }
            peer.send(ok_response(index == 0 ? "one" : "fresh"));
        }
    }};
    std::vector<std::string> seen() {
        std::lock_guard lock(mutex);
        return heads;
    }
};
}  // namespace

TEST_CASE(
    "regression: a POST that reached the server on a reused connection was resent silently without "
    "a key") {
    const std::string backend = GENERATE("pooled", "curl");
    if (backend == "curl" && resolve_backend_name([] {
                                 Options o;
                                 o.backend = "curl";
                                 return o;
                             }())
                                     .value() != "curl")
        return;  // not built
    INFO(backend);
    ReadThenCloseServer s;
    Options o;
    o.max_retries = 0;
    o.idempotency_key = false;
    o.backend = backend;
    REQUIRE(post(s.server.url(), "{}", {}, o)->body == "one");
    auto before = pool_stats();
    auto r = post(s.server.url(), R"({"charge":1})", {}, o);
    const auto heads = s.seen();
    if (backend == "pooled") {
        // No key, whole request out, no answer: it may have been acted on.
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::connection_closed);
        CHECK(pool_stats().resent == before.resent);
        CHECK(heads.size() == 2);
        CHECK(header_of(heads[1], "Idempotency-Key").empty());
    } else {
        // libcurl resends by itself: the key goes out whatever the option says,
        // the same on both copies, so the server can drop the duplicate.
        REQUIRE(heads.size() >= 2);
        const std::string key = header_of(heads[1], "Idempotency-Key");
        CHECK(key.size() == 36);
        if (heads.size() == 3) CHECK(header_of(heads[2], "Idempotency-Key") == key);
    }
}

TEST_CASE(
    "a reused connection that closes after a whole request with an Idempotency-Key is resent once, "
    "with the same key") {
    ReadThenCloseServer s;
    Options o;
    o.max_retries = 0;  // the resend is not the retry policy's
    REQUIRE(post(s.server.url(), "{}", {}, o)->body == "one");
    auto before = pool_stats();
    auto r = post(s.server.url(), R"({"charge":1})", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == "fresh");
    CHECK(pool_stats().resent - before.resent == 1);
    const auto heads = s.seen();
    REQUIRE(heads.size() == 3);
    const std::string key = header_of(heads[1], "Idempotency-Key");
    CHECK(key.size() == 36);
    CHECK(header_of(heads[2], "Idempotency-Key") == key);
    CHECK(header_of(heads[0], "Idempotency-Key") != key);
}

TEST_CASE("no resend once the server had started answering") {
    FaultServer server([](Peer& peer, std::uint64_t index) {
        if (index > 0) {
            while (peer.read_request()) peer.send(ok_response("should not be reached"));
            return;
        }
        if (!peer.read_request()) return;
        peer.send(ok_response("one"));
        if (!peer.read_request()) return;
        peer.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
        peer.reset();
    });
    Options o;
    o.max_retries = 0;
    REQUIRE(post(server.url(), "{}", {}, o)->body == "one");
    auto before = pool_stats();
    auto r = post(server.url(), "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::truncated);
    CHECK(pool_stats().resent == before.resent);
    CHECK(server.connections() == 1);
}

TEST_CASE("a connection with bytes after the response is not reused") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("ok") + "JUNK");
    });
    REQUIRE(post(server.url(), "{}").ok());
    REQUIRE(post(server.url(), "{}").ok());
    CHECK(server.connections() == 2);
}

TEST_CASE(
    "bytes that arrive after a response, while the connection sits idle, are never taken for the "
    "next response") {
    // An unsolicited response (a buggy server's extra answer, a 408 before its
    // close) reaches the idle connection right after the first call returned:
    // the next call must not read it as its own response.
    std::promise<void> first_returned;
    std::promise<void> junk_sent;
    auto first_returned_future = first_returned.get_future();
    FaultServer server([&](Peer& peer, std::uint64_t index) {
        if (index == 0) {
            if (!peer.read_request()) return;
            peer.send(ok_response("first"));
            first_returned_future.wait();
            // On loopback the bytes are in the client's receive queue when send returns.
            peer.send(ok_response("unsolicited"));
            junk_sent.set_value();
            peer.stall();
            return;
        }
        while (peer.read_request()) peer.send(ok_response("second"));
    });
    auto first = post(server.url(), "{}");
    REQUIRE(first.ok());
    CHECK(first->body == "first");
    first_returned.set_value();
    junk_sent.get_future().wait();
    auto second = post(server.url(), "{}");
    REQUIRE(second.ok());
    CHECK(second->body == "second");
    CHECK(server.connections() == 2);
}

TEST_CASE("Connection: close and HTTP/1.0 responses are not pooled") {
    FaultServer server([](Peer& peer, std::uint64_t index) {
        if (!peer.read_request()) return;
        peer.send(index % 2 == 0 ? ok_response("a", "Connection: close\r\n")
                                 : std::string("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nb"));
    });
    REQUIRE(post(server.url(), "{}")->body == "a");
    REQUIRE(post(server.url(), "{}")->body == "b");
    REQUIRE(post(server.url(), "{}")->body == "a");
    CHECK(server.connections() == 3);
}

TEST_CASE("a small request leaves in one send(), counted in our own write path") {
    MockServer server;
    server.start();
    REQUIRE(post(server.base_url() + "/small", "{}").ok());  // connect outside the count
    for (std::size_t size : {std::size_t(1024), std::size_t(64 * 1024)}) {
        std::string body(size, 'b');
        auto before = detail::io_counters().send_calls;
        auto r = post(server.base_url() + "/echo", body);
        auto sends = detail::io_counters().send_calls - before;
        REQUIRE(r.ok());
        CHECK(r->body == body);
        INFO("body " << size);
        CHECK(sends == 1);
    }
}

namespace {

/// An origin whose one pool slot (pool_max_per_origin = 1) is held by a
/// request its server never answers, until release().
class HeldSlot {
  public:
    HeldSlot() {
        Config c;
        c.pool_max_per_origin = 1;
        configure(c);
        holder_ = std::thread([this] {
            Options o;
            o.cancel = &hold_;
            o.max_retries = 0;
            auto r = post(server_.url(), "{}", {}, o);
            holder_cancelled_ = !r.ok() && r.error().code == ErrorCode::cancelled;
        });
        held_ = wait_until([&] { return first_in_.load(); });
    }
    ~HeldSlot() { release(); }
    bool held() const { return held_; }
    std::string url() const { return server_.url(); }
    std::uint64_t connections() const { return server_.connections(); }
    /// The holder cancelled, the config back to its defaults. True when the
    /// holder's call ended `cancelled`.
    bool release() {
        if (holder_.joinable()) {
            hold_.cancel();
            holder_.join();
            configure({});
        }
        return holder_cancelled_;
    }

  private:
    std::atomic<bool> first_in_{false};
    FaultServer server_{[this](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        first_in_ = true;
        peer.stall();
    }};
    CancelToken hold_;
    std::atomic<bool> holder_cancelled_{false};
    std::thread holder_;
    bool held_ = false;
};

}  // namespace

TEST_CASE("the pool cap: a caller waits for a slot, then gets pool_timeout") {
    HeldSlot slot;
    REQUIRE(slot.held());
    Options o;
    o.connect_timeout = 150ms;
    o.max_retries = 0;
    auto r = post(slot.url(), "{}", {}, o);
    CHECK(slot.release());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::pool_timeout);
    CHECK(slot.connections() == 1);
}

TEST_CASE("a caller waiting for a pool slot sleeps without slices and a cancel ends the wait") {
    HeldSlot slot;
    REQUIRE(slot.held());
    const SleepingWait seen = cancel_while_asleep([&](const CancelToken& token) {
        Options o;
        o.cancel = &token;
        o.connect_timeout = 60s;  // far beyond the test: only the cancel ends this wait
        o.max_retries = 0;
        auto r = post(slot.url(), "{}", {}, o);
        return !r.ok() && r.error().code == ErrorCode::cancelled;
    });
    CHECK(seen.asleep);
    CHECK(seen.sleeps <= 2);
    CHECK_FALSE(seen.woke_early);
    CHECK(seen.ended);  // at once: the cancel's notify, not the 60 s deadline
    CHECK(seen.cancelled);
    CHECK(slot.release());
    CHECK(slot.connections() == 1);
}

TEST_CASE("50 threads posting at once share the pool safely") {
    MockServer server;
    server.start();
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 50; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i) {
                auto r = post(server.base_url() + "/small", "{}");
                if (r.ok() && r->body == MockServer::small_body()) ++ok;
            }
        });
    for (auto& t : threads) t.join();
    CHECK(ok == 500);
    CHECK(server.connections_accepted() <= 64);
}

TEST_CASE(
    "the per-thread pool cache never serves a call with other connection settings (ca_file, "
    "insecure, nodelay)") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("ok"));
    });
    Options base;
    base.max_retries = 0;
    REQUIRE(post(server.url(), "{}", {}, base).ok());
    REQUIRE(post(server.url(), "{}", {}, base).ok());
    CHECK(server.connections() == 1);  // same key: the cached pool, one connection
    std::uint64_t expected = 1;
    for (int field = 0; field < 3; ++field) {
        Options other = base;
        if (field == 0)
            other.ca_file = "/nonexistent/other-ca.pem";  // only TLS reads it, but it is key
        if (field == 1) other.insecure = true;
        if (field == 2) other.tcp_nodelay = false;
        INFO("field " << field);
        REQUIRE(post(server.url(), "{}", {}, other).ok());
        CHECK(server.connections() == ++expected);  // another pool: a new connection
    }
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

TEST_CASE(
    "a failed socket() leaks a pool slot and throws: EMFILE is connect_failed, and the next call "
    "works") {
    MockServer server;
    server.start();
    const std::string url = server.base_url() + "/small";
    REQUIRE(post(url, "{}", {}, no_retry()).ok());
    pool_clear();
    const int code = in_child([&] {
        rlimit old{};
        ::getrlimit(RLIMIT_NOFILE, &old);
        // No fd number left: a limit just above the highest open fd, and every
        // hole below it filled.
        rlimit tight{static_cast<rlim_t>(highest_open_fd() + 1), old.rlim_max};
        ::setrlimit(RLIMIT_NOFILE, &tight);
        std::vector<int> fillers;
        for (int fd; (fd = ::dup(0)) >= 0;) fillers.push_back(fd);
        for (int attempt = 0; attempt < 70; ++attempt) {  // past the old 64-slot cap
            Result<Response> r = Error(ErrorCode::invalid_argument, "not run");
            try {
                r = post(url, "{}", {}, no_retry());
            } catch (...) {
                return 1;  // post() must never throw
            }
            if (r.ok()) return 2;
            if (r.error().code != ErrorCode::connect_failed) return 3;
            if (r.error().message.find("open files") == std::string::npos) return 4;
        }
        for (int fd : fillers) ::close(fd);
        ::setrlimit(RLIMIT_NOFILE, &old);
        auto again = post(url, "{}", {}, no_retry());
        return again.ok() && again->body == MockServer::small_body() ? 0 : 5;
    });
    CHECK(code == 0);
}

TEST_CASE(
    "at most 64 concurrent streams per provider: 150 streams to one origin all deliver their first "
    "event") {
    std::atomic<int> waiting{0};
    FaultServer server(
        [&](Peer& peer, std::uint64_t) {
            if (!peer.read_request()) return;
            peer.send(kSseHead + chunk("data: first\n\n"));
            ++waiting;
            peer.stall();
        },
        256);
    std::vector<Stream> streams;
    for (int i = 0; i < 150; ++i) streams.push_back(stream(server.url(), "{}", {}, no_retry()));
    int firsts = 0;
    for (auto& s : streams) {
        auto item = s.next();
        REQUIRE(item);
        CAPTURE(item->is_error() ? item->error->message : "");
        if (item->is_event() && item->event.data == "first") ++firsts;
    }
    CHECK(firsts == 150);
}

TEST_CASE("idle connections of an origin that is never called again are closed at their expiry") {
    Config config;
    config.pool_idle_timeout = 100ms;
    configure(config);
    std::atomic<bool> client_closed{false};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("hi"));
        client_closed = true;  // read_request saw EOF: the pool closed its idle connection
    });
    auto r = post(server.url(), "{}", {}, no_retry());
    configure(Config{});
    REQUIRE(r.ok());
    CHECK(wait_until([&] { return client_closed.load(); }, 10s));
}

TEST_CASE("the pool keeps at most max_idle connections of an origin") {
    Config config;
    config.pool_max_idle_per_origin = 2;
    configure(config);
    std::atomic<int> open{0};
    std::atomic<int> answered{0};
    FaultServer server(
        [&](Peer& peer, std::uint64_t) {
            ++open;
            while (peer.read_request()) {
                // Hold every answer until all five requests are in: five connections at once.
                ++answered;
                while (answered.load() < 5) std::this_thread::sleep_for(1ms);
                peer.send(ok_response("hi"));
            }
            --open;
        },
        64);
    std::vector<std::thread> callers;
    std::atomic<int> succeeded{0};
    for (int i = 0; i < 5; ++i)
        callers.emplace_back([&] {
            if (post(server.url(), "{}", {}, no_retry()).ok())
                ++succeeded;  // Catch asserts on the main thread only
        });
    for (auto& t : callers) t.join();
    configure(Config{});
    CHECK(succeeded.load() == 5);
    CHECK(server.connections() == 5);
    CHECK(wait_until([&] { return open.load() <= 2; }));
    CHECK(open.load() == 2);
}
