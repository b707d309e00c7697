// Trust under hostile servers and exhausted resources: one regression test
// per finding (no crash, no wedge, no silent resend, no spec deviation).

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "codec/http1_parser.hpp"
#include "codec/retry_hint.hpp"
#include "core/cancel.hpp"
#include "core/proxy.hpp"
#include "fault_server.hpp"
#include "firehose.hpp"
#include "nous/http/json.hpp"
#include "nous/http/stream.hpp"
#include "nous/http/testing.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"
#include "tls_fixture.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

Options no_retry() {
    Options o;
    o.max_retries = 0;
    return o;
}

std::string header_of(const std::string& head, const std::string& name) {
    std::regex re("\r\n" + name + ": ([^\r]*)\r\n", std::regex::icase);
    std::smatch m;
    return std::regex_search(head, m, re) ? m[1].str() : std::string();
}

/// Runs `body` in a forked child and returns its exit status: for tests that
/// change process-wide limits (RLIMIT_NOFILE, RLIMIT_AS).
int in_child(const std::function<int()>& body) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status)
                             : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int highest_open_fd() {
    int highest = 0;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        while (dirent* e = ::readdir(dir)) highest = std::max(highest, std::atoi(e->d_name));
        ::closedir(dir);
    }
    return highest;
}

}  // namespace

// ---- 1. deep JSON ------------------------------------------------------------

TEST_CASE(
    "deep JSON crashes the process: a 429 whose body is 200 KB of open brackets is an http_status "
    "error") {
    const std::string deep(200 * 1024, '[');
    FaultServer server([&](Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send(
                "HTTP/1.1 429 Too Many Requests\r\nContent-Type: "
                "application/json\r\nContent-Length: " +
                std::to_string(deep.size()) + "\r\n\r\n" + deep);
    });
    auto r = post(server.url(), "{}", {}, no_retry());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::http_status);
    CHECK(r.error().status == 429);
    CHECK(r.error().body == deep);
    CHECK_FALSE(r.error().retry_after);  // only the hint is lost
}

TEST_CASE("deep JSON crashes the process: parse_json, NDJSON and JSON-array items fail as values") {
    const std::string deep(200 * 1024, '[');
    auto parsed = parse_json(deep);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code == ErrorCode::protocol);
    // 256 levels are fine, 257 are not.
    CHECK(parse_json(std::string(256, '[') + std::string(256, ']')).ok());
    CHECK_FALSE(parse_json(std::string(257, '[') + std::string(257, ']')).ok());
    // Brackets inside strings are not nesting.
    CHECK(parse_json("[\"" + std::string(1000, '[') + "\"]").ok());

    std::vector<Event> out;
    bool done = false;
    auto ndjson = make_ndjson_decoder();
    auto e1 = ndjson->feed(deep + "\n", out, done);
    REQUIRE(e1);
    CHECK(e1->code == ErrorCode::malformed_stream);
    auto array = make_json_array_decoder();
    auto e2 = array->feed("[" + deep, out, done);
    if (!e2) e2 = array->feed(std::string(200 * 1024, ']') + "]", out, done);
    REQUIRE(e2);
    CHECK(e2->code == ErrorCode::malformed_stream);
    CHECK(out.empty());
}

// ---- 2. resource exhaustion --------------------------------------------------

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

#ifndef NOUS_SANITIZED
TEST_CASE("a failed thread creation in stream() is saturated, and the next stream works") {
    // Sanitizers reserve terabytes of address space: RLIMIT_AS cannot be used there.
    MockServer server;
    server.start();
    const std::string url = server.base_url() + "/v1/chat/completions";
    const std::string body = R"({"model":"m","stream":true,"messages":[]})";
    const int code = in_child([&] {
        rlimit old{};
        ::getrlimit(RLIMIT_AS, &old);
        std::ifstream status("/proc/self/status");
        std::string line;
        long vm_kb = 0;
        while (std::getline(status, line))
            if (line.rfind("VmSize:", 0) == 0) vm_kb = std::stol(line.substr(7));
        // Room for small allocations, none for an 8 MiB thread stack.
        rlimit tight{static_cast<rlim_t>(vm_kb + 2048) * 1024, old.rlim_max};
        ::setrlimit(RLIMIT_AS, &tight);
        // glibc reuses the stacks of exited threads without a new mapping:
        // hold threads until no more can start, so that none is left.
        std::atomic<bool> release{false};
        std::vector<std::thread> holders;
        for (int i = 0; i < 1000; ++i) {
            try {
                holders.emplace_back([&] {
                    while (!release.load()) std::this_thread::sleep_for(1ms);
                });
            } catch (const std::system_error&) {
                break;
            }
        }
        std::optional<StreamItem> first;
        try {
            Stream s = stream(url, body);
            first = s.next();
        } catch (...) {
            return 1;
        }
        release = true;
        for (auto& t : holders) t.join();
        ::setrlimit(RLIMIT_AS, &old);
        if (!first || !first->is_error() || first->error->code != ErrorCode::saturated) {
            std::fprintf(stderr, "first item: %s\n",
                         !first              ? "none"
                         : first->is_error() ? first->error->message.c_str()
                                             : "an event");
            return 2;
        }
        if (live_streams() != 0) return 3;  // the slot came back
        Stream again = stream(url, body);
        auto items = drain(again);
        return !items.empty() && items.back().is_done() ? 0 : 4;
    });
    CHECK(code == 0);
}
#endif

// ---- 3. streams per provider, idle expiry ------------------------------------

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

// ---- 4. shared cancel tokens -------------------------------------------------

TEST_CASE("a shared CancelToken cancels one call: it must cancel every call that holds it") {
    std::atomic<int> stalled{0};
    FaultServer server(
        [&](Peer& peer, std::uint64_t) {
            if (!peer.read_request()) return;
            ++stalled;
            peer.stall();
        },
        64);
    CancelToken token;
    Options o = no_retry();
    o.cancel = &token;
    o.read_timeout = 60s;  // the hang guard: only the cancel can end these early
    std::vector<std::thread> calls;
    std::atomic<int> cancelled{0};
    for (int i = 0; i < 4; ++i)
        calls.emplace_back([&] {
            auto r = post(server.url(), "{}", {}, o);
            if (!r.ok() && r.error().code == ErrorCode::cancelled) ++cancelled;
        });
    REQUIRE(wait_until([&] { return stalled.load() == 4; }));
    const auto start = std::chrono::steady_clock::now();
    token.cancel();
    for (auto& t : calls) t.join();
    CHECK(cancelled.load() == 4);
    CHECK(std::chrono::steady_clock::now() - start < 30s);
}

// ---- 5. requests repeated or misreported ---------------------------------------

TEST_CASE(
    "a POST that reached the server is reported as connect_failed and sent again: it is "
    "connection_closed") {
    std::mutex mutex;
    std::vector<std::string> heads;
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string head;
        if (!peer.read_request(&head)) return;
        std::lock_guard lock(mutex);
        heads.push_back(head);
        // ...and close without answering.
    });
    SECTION("without retries: connection_closed, one request, still with its key") {
        auto r = post(server.url(), R"({"a":1})", {}, no_retry());
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::connection_closed);
        std::lock_guard lock(mutex);
        CHECK(heads.size() == 1);
        CHECK(header_of(heads[0], "Idempotency-Key").size() == 36);
    }
    SECTION("with retries: every attempt carries the same Idempotency-Key") {
        Options o;
        o.max_retries = 2;
        testing::Hooks hooks;
        hooks.sleep = [](Milliseconds) {};
        o.test_hooks = &hooks;
        auto r = post(server.url(), R"({"a":1})", {}, o);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::connection_closed);
        std::lock_guard lock(mutex);
        REQUIRE(heads.size() == 3);
        const std::string key = header_of(heads[0], "Idempotency-Key");
        CHECK(std::regex_match(
            key,
            std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
        CHECK(header_of(heads[1], "Idempotency-Key") == key);
        CHECK(header_of(heads[2], "Idempotency-Key") == key);
    }
    SECTION("the caller's own key wins, and the option turns the header off") {
        Options o;
        o.max_retries = 1;
        testing::Hooks hooks;
        hooks.sleep = [](Milliseconds) {};
        o.test_hooks = &hooks;
        (void)post(server.url(), "{}", {{"Idempotency-Key", "mine"}}, o);
        o.idempotency_key = false;
        (void)post(server.url(), "{}", {}, o);
        std::lock_guard lock(mutex);
        REQUIRE(heads.size() == 4);
        CHECK(header_of(heads[0], "Idempotency-Key") == "mine");
        CHECK(heads[0].find("Idempotency-Key: mine\r\n") == heads[0].rfind("Idempotency-Key"));
        CHECK(header_of(heads[2], "Idempotency-Key").empty());
    }
}

TEST_CASE(
    "a server that answers 413 early and closes during the upload: its response is returned") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        char buf[1024];
        (void)::recv(peer.fd(), buf, sizeof buf, 0);  // the head arrived: answer before the body
        peer.send(
            "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo "
            "large");
        peer.reset();
    });
    std::string body(32 << 20, 'x');  // far more than the socket buffers hold
    auto r = post(server.url(), body, {}, no_retry());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::http_status);
    CHECK(r.error().status == 413);
    CHECK(r.error().body == "too large");
}

// ---- 6. SSE end of body --------------------------------------------------------

TEST_CASE(
    "SSE end of body: an event without its blank line at a clean end is discarded, not truncated") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("data: a\n\ndata: b\n") + "0\r\n\r\n");
    });
    Options o = no_retry();
    o.stream_backend = backend;
    Stream s = stream(server.url(), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    CHECK(items[0].is_event());
    CHECK(items[0].event.data == "a");
}

// ---- 7. response heads ---------------------------------------------------------

namespace {
detail::ResponseHead parse_head(const std::string& text, std::string* error = nullptr) {
    detail::HeadParser parser;
    std::size_t used = 0;
    auto status = parser.feed(text, used);
    if (status == detail::HeadParser::Status::error && error) *error = parser.error();
    return status == detail::HeadParser::Status::done ? parser.head() : detail::ResponseHead{};
}
}  // namespace

TEST_CASE("obs-fold in a response header is replaced by SP, not rejected") {
    auto head = parse_head(
        "HTTP/1.1 200 OK\r\nX-Long: part one\r\n  part two\r\n\tpart three\r\nContent-Length: "
        "0\r\n\r\n");
    REQUIRE(head.status == 200);
    REQUIRE(head.headers.size() == 2);
    CHECK(head.headers[0].second == "part one part two part three");
}

TEST_CASE("CR or NUL inside a received field value or reason is replaced by SP") {
    std::string text = "HTTP/1.1 200 O\rK\r\nX-A: a\rb\r\nX-B: c";
    text += '\0';
    text += "d\r\nContent-Length: 0\r\n\r\n";
    auto head = parse_head(text);
    REQUIRE(head.status == 200);
    CHECK(head.reason == "O K");
    CHECK(head.headers[0].second == "a b");
    CHECK(head.headers[1].second == "c d");
}

TEST_CASE(
    "Transfer-Encoding: xchunked is taken for chunked: it is a token list, and xchunked is "
    "refused") {
    std::string error;
    parse_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n", &error);
    CHECK(error.find("unsupported Transfer-Encoding") != std::string::npos);
    auto ok = parse_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    CHECK(ok.chunked);
    error.clear();
    parse_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", &error);
    CHECK_FALSE(error.empty());
    error.clear();
    parse_head(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        &error);
    CHECK_FALSE(error.empty());
}

TEST_CASE("Transfer-Encoding with Content-Length: read by TE, and the connection is never reused") {
    auto head =
        parse_head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
    CHECK(head.chunked);
    CHECK_FALSE(head.content_length);
    CHECK_FALSE(head.keep_alive());
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" +
                      chunk("hello") + "0\r\n\r\n");
    });
    for (int i = 0; i < 2; ++i) {
        auto r = post(server.url(), "{}", {}, no_retry());
        REQUIRE(r.ok());
        CHECK(r->body == "hello");
        CHECK_FALSE(r->connection_reused);
    }
    CHECK(server.connections() == 2);
}

TEST_CASE(
    "a status line that is not HTTP after a 100 Continue fails when its line ends, not at close") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send("HTTP/1.1 100 Continue\r\n\r\nGARBAGE GARBAGE\r\n");
        peer.stall();
    });
    Options o = no_retry();
    o.read_timeout = 30s;  // waiting for the close would end in timeout_read
    auto r = post(server.url(), "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::protocol);
}

// ---- 9. SSE ids ---------------------------------------------------------------

TEST_CASE(
    "SSE id multiplies memory: one id is stored once and shared by the events that carry it") {
    auto decoder = make_sse_decoder();
    std::vector<Event> out;
    bool done = false;
    const std::string id(1 << 20, 'i');
    REQUIRE_FALSE(decoder->feed("id: " + id + "\n", out, done));
    std::string events;
    for (int i = 0; i < 1000; ++i) events += "data: x\n\n";
    REQUIRE_FALSE(decoder->feed(events, out, done));
    REQUIRE(out.size() == 1000);
    CHECK(out.front().id == id);
    CHECK(out.back().id == id);
    CHECK(out.front().id.data() == out.back().id.data());  // one copy for all
}

// ---- 10. total deadline over TLS -------------------------------------------------

TEST_CASE(
    "total deadline over TLS: a record dripping one byte every 20 ms is cut at the deadline") {
    const auto& pki = test_pki();
    TlsServer server(pki.localhost_cert, pki.localhost_key, TlsServer::Mode::drip_record);
    Options o = no_retry();
    o.ca_file = pki.ca_cert;
    o.read_timeout = 60s;  // each byte comes well within the idle timeout
    o.total_timeout = 500ms;
    const auto start = std::chrono::steady_clock::now();
    auto r = post("https://localhost:" + std::to_string(server.port()) + "/x", "{}", {}, o);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::timeout_total);
    CHECK(took < 20s);  // the record alone would take 5.5 minutes
}

// ---- 11. window settings -------------------------------------------------------

TEST_CASE(
    "window_low_bytes = 0 always ends in backpressure_overflow: it means 'until drained' and "
    "works") {
    const std::string backend = GENERATE("window", "pull");
    Firehose firehose(8ull << 20);
    Options o = no_retry();
    o.stream_backend = backend;
    o.window_high_bytes = 256 * 1024;
    o.window_low_bytes = 0;
    Stream s = stream(firehose.server.url(), "{}", {}, o);
    auto items = drain(s);
    REQUIRE_FALSE(items.empty());
    CHECK(items.back().is_event());
    CHECK(static_cast<int>(items.size()) == firehose.events.load());
    o.window_low_bytes = 512 * 1024;  // above the high mark: refused before anything is sent
    Stream bad = stream(firehose.server.url(), "{}", {}, o);
    auto refused = bad.next();
    REQUIRE(refused);
    CHECK(refused->error->code == ErrorCode::invalid_argument);
}

// ---- 12. SIGPIPE ---------------------------------------------------------------

namespace {
/// Unblocks SIGPIPE for the scope (libPocoFoundation blocks it in the main
/// thread when it loads; an application may unblock it), so that only our
/// guards stand between a write and the process's death.
struct SigpipeUnblocked {
    sigset_t pipe{}, old{};
    SigpipeUnblocked() {
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_UNBLOCK, &pipe, &old);
    }
    ~SigpipeUnblocked() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
    bool pending() const {
        sigset_t p;
        sigpending(&p);
        return sigismember(&p, SIGPIPE) == 1;
    }
};
}  // namespace

TEST_CASE("SIGPIPE can kill a process when a TLS pull stream whose peer reset is destroyed") {
    const auto& pki = test_pki();
    TlsServer server(pki.localhost_cert, pki.localhost_key, TlsServer::Mode::sse_then_reset);
    SigpipeUnblocked unblocked;
    {
        Options o = no_retry();
        o.ca_file = pki.ca_cert;
        o.stream_backend = "pull";
        Stream s = stream("https://localhost:" + std::to_string(server.port()) + "/x", "{}", {}, o);
        auto first = s.next();
        REQUIRE(first);
        CHECK(first->event.data == "one");
        REQUIRE(wait_until([&] { return server.resets() == 1; }));
    }  // destroyed here: the close writes into a reset connection
    CHECK_FALSE(unblocked.pending());
}

TEST_CASE("SIGPIPE can kill a process in pool_clear() with TLS connections the peer reset") {
    const auto& pki = test_pki();
    TlsServer server(pki.localhost_cert, pki.localhost_key, TlsServer::Mode::answer_then_reset);
    Options o = no_retry();
    o.ca_file = pki.ca_cert;
    auto r = post("https://localhost:" + std::to_string(server.port()) + "/x", "{}", {}, o);
    REQUIRE(r.ok());
    REQUIRE(wait_until([&] { return server.resets() == 1; }));
    SigpipeUnblocked unblocked;
    pool_clear();  // closing the idle connection writes close_notify into a reset socket
    CHECK_FALSE(unblocked.pending());
}

// ---- 13. credentials -----------------------------------------------------------

TEST_CASE("userinfo in a request URL is dropped silently: it is sent as Basic auth") {
    std::mutex mutex;
    std::string head;
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string h;
        if (!peer.read_request(&h)) return;
        {
            std::lock_guard lock(mutex);
            head = h;
        }
        peer.send(ok_response("ok"));
    });
    auto r = post("http://user:p%40ss@127.0.0.1:" + std::to_string(server.port()) + "/x", "{}", {},
                  no_retry());
    REQUIRE(r.ok());
    std::lock_guard lock(mutex);
    CHECK(header_of(head, "Authorization") == "Basic dXNlcjpwQHNz");  // base64("user:p@ss")
}

TEST_CASE("proxy userinfo is base64'd without percent-decoding: p%40ss is the password p@ss") {
    CHECK(detail::basic_auth("user:p%40ss") == "Basic dXNlcjpwQHNz");
    CHECK(detail::basic_auth("a:b") == "Basic YTpi");
    CHECK(detail::basic_auth("ab:cd") == "Basic YWI6Y2Q=");
}

TEST_CASE(
    "verbose output printed user:pass@ of a URL: redact_url hides userinfo and a key parameter") {
    CHECK(redact_url("https://user:secret@api.example/v1?key=abc&x=1") ==
          "https://[REDACTED]@api.example/v1?key=[REDACTED]&x=1");
    CHECK(redact_url("https://api.example/v1") == "https://api.example/v1");
}

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

// ---- 14. curl backend cancel -------------------------------------------------------

#ifdef NOUS_HAVE_CURL
TEST_CASE("curl backend cancel: the token holds no registration once the transfer ended") {
    MockServer server;
    server.start();
    CancelToken token;
    Options o = no_retry();
    o.backend = "curl";
    o.cancel = &token;
    auto r = post(server.base_url() + "/small", "{}", {}, o);
    REQUIRE(r.ok());
    auto& state = detail::CancelAccess::state(token);
    std::lock_guard lock(state.mutex);
    CHECK(state.targets
              .empty());  // a later cancel shuts down no fd libcurl may have closed and reused
}

TEST_CASE("curl backend cancel: a transfer blocked reading a stalled server ends cancelled") {
    std::atomic<bool> stalled{false};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        stalled = true;
        peer.stall();
    });
    CancelToken token;
    Options o = no_retry();
    o.backend = "curl";
    o.cancel = &token;
    o.read_timeout = 60s;
    std::thread canceller([&] {
        REQUIRE(wait_until([&] { return stalled.load(); }));
        token.cancel();
    });
    auto r = post(server.url(), "{}", {}, o);
    canceller.join();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::cancelled);
}
#endif
