// stream() against loopback servers, for both built-in stream backends.

#include "nous/http/stream.hpp"

#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "fault_server.hpp"
#include "nous/http/json.hpp"
#include "nous/http/testing.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"
#include "transport/io_counters.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

Options with_backend(const std::string& backend) {
    Options o;
    o.stream_backend = backend;
    o.max_retries = 0;
    return o;
}

}  // namespace

TEST_CASE("hello, world, DONE: two events, then done, then the end") {
    const std::string backend = GENERATE("window", "pull");
    INFO("backend " << backend);
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("data: hello\n\n") + chunk("data:  world\n\n") +
                  chunk("data: [DONE]\n\n") + "0\r\n\r\n");
    });
    Stream s =
        stream(server.url("/v1/chat/completions"), R"({"stream":true})", {}, with_backend(backend));
    auto items = drain(s);
    REQUIRE(items.size() == 3);
    CHECK(items[0].is_event());
    CHECK(items[0].event.data == "hello");
    CHECK(items[1].event.data == " world");
    CHECK(items[2].is_done());
    CHECK_FALSE(s.next().has_value());
    CHECK(s.stats().done_seen);
    CHECK(s.stats().items == 2);
    CHECK(s.stats().status == 200);
    bool has_type = false;
    for (auto& [k, v] : s.response_headers())
        has_type |= k == "content-type" && v == "text/event-stream";
    CHECK(has_type);
}

TEST_CASE("the mock server's streamed completion arrives token by token, range-for works") {
    const std::string backend = GENERATE("window", "pull");
    MockServerOptions mo;
    mo.stream_tokens = 8;
    MockServer server(mo);
    server.start();
    std::string text;
    bool done = false;
    Stream s = stream(server.base_url() + "/v1/chat/completions",
                      R"({"model":"m","stream":true,"messages":[]})", {}, with_backend(backend));
    for (auto& item : s) {
        if (item.is_done()) done = true;
        if (!item.is_event()) continue;
        auto doc = parse_json(item.event.data);
        REQUIRE(doc.ok());
        auto& delta = (*doc.value())["choices"][0]["delta"];
        if (delta.HasMember("content")) text += delta["content"].GetString();
    }
    CHECK(done);
    CHECK(text == "Hello from the nous-http mock server.");
    CHECK(s.request_id() == "req_mock_1");  // the head's x-request-id
    auto request = server.last_request();
    CHECK(request.header("accept") == std::optional<std::string>("text/event-stream"));
    CHECK(request.header("content-type") == std::optional<std::string>("application/json"));
}

TEST_CASE("a caller's Accept and Content-Type are kept (names compared case-insensitively)") {
    MockServer server;
    server.start();
    Stream s = stream(server.base_url() + "/echo", "x",
                      {{"ACCEPT", "application/x-ndjson"}, {"Content-Type", "text/plain"}});
    drain(s);
    auto request = server.last_request();
    CHECK(request.header("accept") == std::optional<std::string>("application/x-ndjson"));
    CHECK(request.header("content-type") == std::optional<std::string>("text/plain"));
    int accepts = 0;
    for (auto& [k, v] : request.headers) accepts += k == "accept";
    CHECK(accepts == 1);
}

TEST_CASE("a 500 is one error item with status, headers and body") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send(
                "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 14\r\nX-Request-Id: "
                "r1\r\n\r\n{\"error\":\"x\"}\n");
    });
    Stream s = stream(server.url(), "{}", {}, with_backend(backend));
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK(items[0].error->code == ErrorCode::http_status);
    CHECK(items[0].error->status == 500);
    CHECK(items[0].error->body == "{\"error\":\"x\"}\n");
    bool has_id = false;
    for (auto& [k, v] : items[0].error->headers) has_id |= k == "x-request-id" && v == "r1";
    CHECK(has_id);
}

TEST_CASE("an unreachable host is one error item") {
    const std::string backend = GENERATE("window", "pull");
    Stream s = stream("http://127.0.0.1:1/v1/chat/completions", "{}", {}, with_backend(backend));
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    CHECK(items[0].error->code == ErrorCode::connect_failed);
}

TEST_CASE("bad input is the first item, and nothing is sent") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer server([](Peer& peer, std::uint64_t) { peer.read_request(); });
    Stream a = stream(server.url(), "{}", {{"X-Evil", "a\r\nInjected: 1"}}, with_backend(backend));
    auto items = drain(a);
    REQUIRE(items.size() == 1);
    CHECK(items[0].error->code == ErrorCode::invalid_argument);
    Stream b = stream("ftp://127.0.0.1/x", "{}", {}, with_backend(backend));
    CHECK(drain(b)[0].error->code == ErrorCode::invalid_argument);
    CHECK(server.connections() == 0);
}

TEST_CASE("refuse_unreadable_answers: an SSE stream answered with a JSON document is an error") {
    // A server that ignores "stream": true. Read as SSE, its JSON is lines of
    // unknown fields: no event, a clean end, and nothing said. A caller that
    // can read a whole answer (run_chat) asks for the check; by default a
    // stream reads what it is sent, whatever its Content-Type.
    const std::string backend = GENERATE("window", "pull");
    auto strict = [&backend] {
        Options o = with_backend(backend);
        o.refuse_unreadable_answers = true;
        return o;
    };
    const std::string whole = R"({"choices":[{"message":{"content":"whole"}}]})";
    auto answer = [](const std::string& type, const std::string& body) {
        return FaultServer([type, body](Peer& peer, std::uint64_t) {
            while (peer.read_request())
                peer.send("HTTP/1.1 200 OK\r\nContent-Type: " + type +
                          "\r\nX-Request-Id: r9\r\nContent-Length: " + std::to_string(body.size()) +
                          "\r\n\r\n" + body);
        });
    };
    for (const std::string type :
         {"application/json", "Application/JSON; charset=utf-8", "application/problem+json"}) {
        INFO(type);
        auto server = answer(type, whole);
        Stream lenient = stream(server.url(), "{}", {}, with_backend(backend));
        CHECK(drain(lenient).empty());  // read as SSE: no event, and the end
        Stream s = stream(server.url(), "{}", {}, strict());
        auto items = drain(s);
        REQUIRE(items.size() == 1);
        REQUIRE(items[0].is_error());
        CHECK(items[0].error->code == ErrorCode::protocol);
        CHECK_THAT(items[0].error->message, Catch::Contains("did not stream"));
        CHECK(items[0].error->status == 200);
        CHECK(items[0].error->body == whole);
        CHECK(items[0].error->request_id == "r9");
    }
    // Only SSE is held to it: NDJSON may be labelled application/json.
    auto lines = answer("application/json", "{\"a\":1}\n");
    Options ndjson = strict();
    ndjson.stream_format = StreamFormat::ndjson;
    Stream n = stream(lines.url(), "{}", {}, ndjson);
    auto read = drain(n);
    REQUIRE(read.size() == 1);
    CHECK(read[0].event.data == "{\"a\":1}");
    // An event stream with another label is still read.
    auto plain = answer("text/plain", "data: one\n\n");
    Stream p = stream(plain.url(), "{}", {}, strict());
    auto events = drain(p);
    REQUIRE(events.size() == 1);
    CHECK(events[0].event.data == "one");
}

TEST_CASE("a stream whose server writes 1xx heads without end is refused after 100") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer endless([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        while (peer.send("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")) {
        }
    });
    Stream s = stream(endless.url(), "{}", {}, with_backend(backend));
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK(items[0].error->code == ErrorCode::protocol);
    CHECK_THAT(items[0].error->message, Catch::Contains("interim (1xx) responses"));
}

TEST_CASE("refuse_unreadable_answers: a stream in a coding nobody asked for is an error") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                "Content-Encoding: br\r\nContent-Length: 4\r\n\r\n\x0b\x02\x80x");
    });
    // By default the bytes are the body, as `nouscli post --stream --format raw` prints them.
    Options raw = with_backend(backend);
    raw.stream_format = StreamFormat::raw;
    Stream r = stream(server.url(), "{}", {}, raw);
    auto bytes = drain(r);
    REQUIRE(bytes.size() == 1);
    CHECK(bytes[0].event.data == "\x0b\x02\x80x");
    raw.refuse_unreadable_answers = true;
    Stream s = stream(server.url(), "{}", {}, raw);
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK(items[0].error->code == ErrorCode::protocol);
    CHECK_THAT(items[0].error->message, Catch::Contains("Content-Encoding: 'br'"));
    CHECK(items[0].error->body == "\x0b\x02\x80x");
}

TEST_CASE("a body cut mid-event is truncated, a clean end without DONE is a normal end") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer cut([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("data: one\n\n") + chunk("data: tw"));
        peer.close_write();
    });
    Stream s = stream(cut.url(), "{}", {}, with_backend(backend));
    auto items = drain(s);
    REQUIRE(items.size() == 2);
    CHECK(items[0].event.data == "one");
    CHECK(items[1].error->code == ErrorCode::truncated);

    FaultServer clean([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("event: message_stop\ndata: {}\n\n") + "0\r\n\r\n");
    });
    Stream t = stream(clean.url(), "{}", {}, with_backend(backend));
    auto end = drain(t);
    REQUIRE(end.size() == 1);
    CHECK(end[0].event.type == "message_stop");
    CHECK_FALSE(t.stats().done_seen);

    // Complete events, then a body short of its Content-Length: truncated too.
    FaultServer short_length([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: a\n\n");
        peer.close_write();
    });
    Stream u = stream(short_length.url(), "{}", {}, with_backend(backend));
    auto short_items = drain(u);
    REQUIRE(short_items.size() == 2);
    CHECK(short_items[1].error->code == ErrorCode::truncated);
}

TEST_CASE("a large body arrives whole through either backend, however it is framed") {
    // 1.5 MiB of numbered events: read straight into large pieces (Content-
    // Length, large chunks) or through the read buffer (small chunks, a
    // body that ends at close), each event exactly once and in order.
    const std::string backend = GENERATE("window", "pull");
    const std::string framing = GENERATE("length", "large chunks", "small chunks", "close");
    INFO(backend << ", " << framing);
    std::string body;
    int events = 0;
    while (body.size() < 1536 * 1024)
        body += "data: event " + std::to_string(events++) + " " + std::string(40, 'x') + "\n\n";
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        if (framing == "length" || framing == "close") {
            std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n";
            head += framing == "length" ? "Content-Length: " + std::to_string(body.size()) + "\r\n"
                                        : std::string("Connection: close\r\n");
            peer.send(head + "\r\n" + body);
            if (framing == "close") peer.close_write();
            return;
        }
        const std::size_t piece = framing == "large chunks" ? 200 * 1024 : 700;
        std::string framed = kSseHead;
        for (std::size_t at = 0; at < body.size(); at += piece)
            framed += chunk(body.substr(at, piece));
        peer.send(framed + "0\r\n\r\n");
    });
    Stream s = stream(server.url(), "{}", {}, with_backend(backend));
    int next = 0;
    bool in_order = true;
    for (auto item = s.next_view(); item && item->is_event(); item = s.next_view()) {
        const std::string want = "event " + std::to_string(next++) + " " + std::string(40, 'x');
        in_order = in_order && item->event.data == want;
    }
    CHECK(in_order);
    CHECK(next == events);
    CHECK(s.stats().bytes == body.size());
}

TEST_CASE("a stream's reads grow past its small first buffer once the server sends faster") {
    // Pull reads on this thread, so this thread's count of reads is the
    // stream's. A stream starts with a 2 KiB buffer (what token events
    // need, and what it keeps for its life); a read that fills it moves the
    // reads to 64 KiB. 1.5 MiB through the buffer (a body that ends at
    // close: no direct reads) took 777 reads in 2 KiB pieces.
    const bool small_first = GENERATE(false, true);
    INFO((small_first ? "a small event read first, then the rest" : "all at once"));
    std::string body;
    while (body.size() < 1536 * 1024) body += "data: " + std::string(250, 'x') + "\n\n";
    std::promise<void> first_read;
    auto first_read_done = first_read.get_future();
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        const std::string head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        if (small_first) {
            // The head and one event: the reads so far fit the first buffer.
            peer.send(head + body.substr(0, 258));
            first_read_done.wait();
            peer.send(body.substr(258));
        } else {
            peer.send(head + body);
        }
        peer.close_write();
    });
    const std::uint64_t reads_before = detail::io_counters().recv_calls;
    Stream s = stream(server.url(), "{}", {}, with_backend("pull"));
    std::size_t events = 0;
    for (auto item = s.next_view(); item && item->is_event(); item = s.next_view())
        if (++events == 1 && small_first) first_read.set_value();
    const std::uint64_t reads = detail::io_counters().recv_calls - reads_before;
    INFO(reads << " reads for " << body.size() << " bytes");
    CHECK(events == body.size() / 258);
    CHECK(reads < body.size() / (2 * detail::limits::stream_first_read_bytes));
}

TEST_CASE("take 2 of 100 events, then drop the handle: no hang, the reader is gone") {
    const std::string backend = GENERATE("window", "pull");
    std::atomic<bool> client_gone{false};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        std::string body;
        for (int i = 0; i < 100; ++i) body += chunk("data: event " + std::to_string(i) + "\n\n");
        peer.send(kSseHead + body);
        peer.stall();  // never ends the body: only the client can end this
        client_gone = true;
    });
    const std::size_t before = live_streams();
    {
        Stream s = stream(server.url(), "{}", {}, with_backend(backend));
        auto first = s.next();
        auto second = s.next();
        REQUIRE(first);
        REQUIRE(second);
        CHECK(second->event.data == "event 1");
        CHECK(live_streams() == before + 1);
    }
    CHECK(live_streams() == before);
    CHECK(wait_until([&] { return client_gone.load(); }));  // the connection was closed
}

TEST_CASE("cancel from another thread ends a stream blocked in a read") {
    const std::string backend = GENERATE("window", "pull");
    std::atomic<bool> head_sent{false};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("data: first\n\n"));
        head_sent = true;
        peer.stall();
    });
    Stream s = stream(server.url(), "{}", {}, with_backend(backend));
    REQUIRE(s.next()->event.data == "first");
    std::thread canceller([&] { s.cancel(); });
    auto item = s.next();  // blocked until the cancel (or already cancelled)
    canceller.join();
    REQUIRE(item);
    CHECK(item->error->code == ErrorCode::cancelled);
    CHECK_FALSE(s.next().has_value());
}

TEST_CASE(
    "regression: streams ignored Options::cancel, a shared token ends every stream and post that "
    "holds it") {
    const std::string backend = GENERATE("window", "pull");
    std::atomic<int> stalled{0};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string head;
        if (!peer.read_request(&head)) return;
        if (head.find("/stream") != std::string::npos)
            peer.send(kSseHead + chunk("data: first\n\n"));
        ++stalled;
        peer.stall();
    });
    CancelToken token;
    Options o = with_backend(backend);
    o.cancel = &token;
    o.read_timeout = 120s;  // far past the test's own timeout: only the cancel can end these calls
    Stream a = stream(server.url("/stream"), "{}", {}, o);
    Stream b = stream(server.url("/stream"), "{}", {}, o);
    REQUIRE(a.next()->event.data == "first");
    REQUIRE(b.next()->event.data == "first");
    std::optional<Result<Response>> posted;
    std::thread poster([&] { posted.emplace(post(server.url("/post"), "{}", {}, o)); });
    REQUIRE(wait_until([&] { return stalled.load() == 3; }));
    std::thread canceller([&] { token.cancel(); });
    auto from_a = a.next();
    auto from_b = b.next();
    canceller.join();
    poster.join();
    REQUIRE(from_a);
    REQUIRE(from_b);
    CHECK(from_a->error->code == ErrorCode::cancelled);
    CHECK(from_b->error->code == ErrorCode::cancelled);
    CHECK_FALSE(a.next().has_value());
    REQUIRE(posted);
    REQUIRE_FALSE(posted->ok());
    CHECK(posted->error().code == ErrorCode::cancelled);
}

TEST_CASE(
    "a shared token reaches a stream in connect, and one cancelled before stream() ends it at "
    "once") {
    const std::string backend = GENERATE("window", "pull");
    BlackholeListener blackhole;
    CancelToken token;
    Options o = with_backend(backend);
    o.connect_timeout = 120s;
    o.cancel = &token;
    Stream s = stream("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/", "{}", {}, o);
    std::thread canceller([&] { token.cancel(); });
    auto item = s.next();
    canceller.join();
    REQUIRE(item);
    CHECK(item->error->code == ErrorCode::cancelled);
    Stream late = stream("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/", "{}", {}, o);
    auto first = late.next();
    REQUIRE(first);
    CHECK(first->error->code == ErrorCode::cancelled);
}

TEST_CASE("a cancel ends the stream ahead of events already received, plain or not") {
    // After a first piece, five events in one chunk (one more piece): after
    // the first of them, the rest are pending in the piece (plain ones handed
    // out one at a time, the others as views). A cancel between two
    // next_view calls ends the stream there.
    const std::string backend = GENERATE("window", "pull");
    const std::string events =
        GENERATE(std::string("data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\ndata: 5\n\n"),
                 std::string("data: 1\n\n: note\ndata: 2\n\nevent: x\ndata: 3\n\ndata: 4\n\n"));
    INFO("backend " << backend << ", events " << events);
    std::promise<void> first_read;
    auto first_was_read = first_read.get_future();
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead + chunk("data: 0\n\n"));
        first_was_read.wait();  // the second piece arrives on its own
        peer.send(chunk(events));
        peer.stall();  // no [DONE], no end: only the cancel ends it
    });
    // Set however the test ends, before the server is destroyed (declared
    // after it), so that the server's thread never waits on.
    struct Release {
        std::promise<void>& p;
        bool done = false;
        void now() {
            if (!std::exchange(done, true)) p.set_value();
        }
        ~Release() { now(); }
    } release{first_read};
    Stream s = stream(server.url(), "{}", {}, with_backend(backend));
    auto zero = s.next_view();
    REQUIRE(zero);
    REQUIRE(zero->is_event());
    CHECK(zero->event.data == "0");
    release.now();
    auto one = s.next_view();
    REQUIRE(one);
    REQUIRE(one->is_event());
    CHECK(one->event.data == "1");
    s.cancel();
    auto next = s.next_view();
    REQUIRE(next);
    REQUIRE(next->is_error());
    CHECK(next->error->code == ErrorCode::cancelled);
    CHECK_FALSE(s.next_view().has_value());
    CHECK(s.stats().items == 2);
}

TEST_CASE("dropping a stream blocked in connect returns") {
    const std::string backend = GENERATE("window", "pull");
    BlackholeListener blackhole;
    Options o = with_backend(backend);
    o.connect_timeout = 60s;
    Stream s = stream("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/", "{}", {}, o);
    if (backend == "pull") {
        std::thread canceller([&] {
            // The pull stream connects inside next(): cancel it from here.
            s.cancel();
        });
        auto item = s.next();
        canceller.join();
        REQUIRE(item);
        CHECK(item->error->code == ErrorCode::cancelled);
    }
    // window: the destructor cancels the reader thread blocked in connect and joins it.
}

TEST_CASE("retries apply before the first event: 503 then a stream") {
    std::atomic<int> requests{0};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        while (peer.read_request()) {
            if (requests++ == 0) {
                peer.send(
                    "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: "
                    "0\r\n\r\n");
            } else {
                peer.send(kSseHead + chunk("data: ok\n\n") + chunk("data: [DONE]\n\n") +
                          "0\r\n\r\n");
            }
        }
    });
    std::vector<Milliseconds> sleeps;
    testing::Hooks hooks;
    hooks.sleep = [&](Milliseconds d) { sleeps.push_back(d); };
    Options o;
    o.test_hooks = &hooks;  // default max_retries: 2
    Stream s = stream(server.url(), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 2);
    CHECK(items[0].event.data == "ok");
    CHECK(sleeps == std::vector<Milliseconds>{1000ms});
    CHECK(requests == 2);
}

TEST_CASE("a stream that ends cleanly gives its connection back to the pool") {
    const std::string backend = GENERATE("window", "pull");
    MockServer server;
    server.start();
    for (int i = 0; i < 3; ++i) {
        Stream s = stream(server.base_url() + "/small", "{}", {}, with_backend(backend));
        drain(s);  // to the end of the body: the reader released the connection before the end item
    }
    CHECK(server.connections_accepted() == 1);
}

TEST_CASE("streams that end at DONE still give their connection back") {
    // The mock server sends [DONE] and the last chunk together; after [DONE]
    // the consumer reads the rest of the body (5 ms budget: pull, and the
    // window's read relay) and pools the connection.
    const std::string backend = GENERATE("window", "pull");
    MockServer server;
    server.start();
    for (int i = 0; i < 5; ++i) {
        Stream s = stream(server.base_url() + "/v1/chat/completions", R"({"stream":true})", {},
                          with_backend(backend));
        bool done = false;
        while (auto item = s.next())
            if (item->is_done()) done = true;
        REQUIRE(done);
    }
    CHECK(server.connections_accepted() == 1);
}

TEST_CASE("past the concurrent streams cap a stream yields exactly one saturated item") {
    Config c;
    c.max_concurrent_streams = live_streams() + 2;
    configure(c);
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(kSseHead);
        peer.stall();
    });
    {
        Stream a = stream(server.url(), "{}");
        Stream b = stream(server.url(), "{}", {}, with_backend("pull"));
        Stream over = stream(server.url(), "{}");
        auto items = drain(over);
        REQUIRE(items.size() == 1);
        CHECK(items[0].error->code == ErrorCode::saturated);
    }
    configure({});
}

TEST_CASE("NDJSON and JSON-array streams are selected by an option") {
    const std::string backend = GENERATE("window", "pull");
    FaultServer server([](Peer& peer, std::uint64_t) {
        std::string head;
        while (peer.read_request(&head)) {
            bool array = head.find("POST /array") == 0;
            std::string body = array ? "[{\"a\":1},\n{\"b\":2}]" : "{\"a\":1}\n{\"b\":2}\n";
            peer.send("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                      "\r\n\r\n" + body);
        }
    });
    for (auto format : {StreamFormat::ndjson, StreamFormat::json_array}) {
        Options o = with_backend(backend);
        o.stream_format = format;
        Stream s = stream(server.url(format == StreamFormat::json_array ? "/array" : "/lines"),
                          "{}", {}, o);
        auto items = drain(s);
        REQUIRE(items.size() == 2);
        CHECK(items[0].event.data == "{\"a\":1}");
        CHECK(items[1].event.data == "{\"b\":2}");
    }
}

TEST_CASE("a custom decoder is used when given") {
    class Upper : public Decoder {
      public:
        std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool&) override {
            Event e;
            e.type = "upper";
            for (char c : bytes)
                e.data += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            out.push_back(e);
            return std::nullopt;
        }
        std::optional<Error> finish(std::vector<Event>&) override { return std::nullopt; }
    };
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (peer.read_request()) peer.send(ok_response("shout"));
    });
    Options o;
    o.decoder = [] { return std::make_unique<Upper>(); };
    Stream s = stream(server.url(), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    CHECK(items[0].event.data == "SHOUT");
}

TEST_CASE("next_view gives the same items as next, without a copy, however the body is cut") {
    const std::string backend = GENERATE("window", "pull");
    const std::string events =
        "event: delta\nid: 7\ndata: {\"t\":\"a\"}\n\n"
        "data: line1\ndata: line2\n\n"
        ": comment\nid\nretry: 50\ndata: \"q\"\n\n"
        "data: " +
        std::string(5000, 'z') +
        "\n\n"
        "data: [DONE]\n\n";
    for (std::size_t piece : {std::size_t(1), std::size_t(7), std::size_t(1 << 20)}) {
        CAPTURE(backend, piece);
        FaultServer server([&](Peer& peer, std::uint64_t) {
            while (peer.read_request()) {
                std::string out = kSseHead;
                for (std::size_t i = 0; i < events.size(); i += piece)
                    out += chunk(events.substr(i, piece));
                peer.send(out + "0\r\n\r\n");
            }
        });
        Options o;
        o.max_retries = 0;
        o.stream_backend = backend;
        Stream owning = stream(server.url(), "{}", {}, o);
        std::vector<StreamItem> want;
        while (auto item = owning.next()) want.push_back(std::move(*item));
        Stream viewing = stream(server.url(), "{}", {}, o);
        std::vector<StreamItem> got;
        while (auto view = viewing.next_view()) {
            StreamItem copy;
            copy.kind = view->kind;
            if (view->is_event()) {
                copy.event.type.assign(view->event.type);
                copy.event.data.assign(view->event.data);
                copy.event.id = view->event.id_view();
                copy.event.retry = view->event.retry;
            }
            got.push_back(std::move(copy));
        }
        REQUIRE(want.size() == 5);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            CHECK(got[i].kind == want[i].kind);
            CHECK(got[i].event.type == want[i].event.type);
            CHECK(got[i].event.data == want[i].event.data);
            CHECK(got[i].event.id == want[i].event.id);
            CHECK(got[i].event.retry == want[i].event.retry);
        }
        CHECK(want[0].event.type == "delta");
        CHECK(want[0].event.id == "7");
        CHECK(want[1].event.data == "line1\nline2");
        CHECK(want[2].event.id == "");
        CHECK(want[2].event.retry == Milliseconds(50));
        CHECK(want[3].event.data.size() == 5000);
        CHECK(want[4].is_done());
    }
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

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
        // Room for small allocations and a few thread stacks.
        rlimit tight{static_cast<rlim_t>(vm_kb + 2048) * 1024, old.rlim_max};
        ::setrlimit(RLIMIT_AS, &tight);
        // glibc reuses the stacks of exited threads without a new mapping:
        // hold threads with the reader's stack size until no more can start,
        // so that no room for a reader's stack is left.
        static std::atomic<bool> release{false};
        std::vector<pthread_t> holders;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, nous::http::detail::limits::reader_stack_bytes);
        for (int i = 0; i < 1000; ++i) {
            pthread_t holder;
            auto hold = [](void*) -> void* {
                while (!release.load()) std::this_thread::sleep_for(1ms);
                return nullptr;
            };
            if (pthread_create(&holder, &attributes, hold, nullptr) != 0) break;
            holders.push_back(holder);
        }
        pthread_attr_destroy(&attributes);
        std::optional<StreamItem> first;
        try {
            Stream s = stream(url, body);
            first = s.next();
        } catch (...) {
            return 1;
        }
        release = true;
        for (pthread_t t : holders) pthread_join(t, nullptr);
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

// ---- deadlines that count content (Options::event_idle_timeout) -------------

namespace {

/// Sends `: keep-alive` comments every 20 ms, and nothing else, until the
/// client goes away.
void comments_forever(Peer& peer, std::uint64_t) {
    if (!peer.read_request()) return;
    if (!peer.send(kSseHead)) return;
    while (!peer.stopping() && peer.send(chunk(": keep-alive\n\n")))
        std::this_thread::sleep_for(20ms);
}

}  // namespace

TEST_CASE("a stream of keep-alive comments only ends by event_idle_timeout") {
    const std::string backend = GENERATE("window", "pull");
    INFO("backend " << backend);
    FaultServer server(comments_forever);
    Options o = with_backend(backend);
    o.read_timeout = 60s;  // bytes keep coming: only the content deadline can end it
    o.event_idle_timeout = 300ms;
    Stream s = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK(items[0].error->code == ErrorCode::timeout_read);
    CHECK_THAT(items[0].error->message, Catch::Contains("event_idle_timeout"));
    CHECK(s.stats().bytes > 0);  // comments did arrive, and did not count
}

// ThreadSanitizer refuses a thread started after a fork of a process with
// threads, and AddressSanitizer's allocator is not fork-safe: the normal
// build runs it.
#ifndef NOUS_SANITIZED
TEST_CASE("content_deadline_after_fork: a fork()ed child's content deadlines fire") {
    // The finding: the watcher thread's "started" flag crossed fork() but the
    // thread did not; the child's stream waited in next() for ever.
    const std::string backend = GENERATE("window", "pull");
    INFO("backend " << backend);
    FaultServer server(comments_forever);
    Options o = with_backend(backend);
    o.read_timeout = 60s;
    o.event_idle_timeout = 300ms;
    {
        Stream parent = stream(server.url("/v1/chat/completions"), "{}", {}, o);
        auto items = drain(parent);  // the parent's watcher thread runs from here
        REQUIRE(items.size() == 1);
        REQUIRE(items[0].error->code == ErrorCode::timeout_read);
    }
    const int code = in_child([&] {
        ::alarm(20);  // a hang ends the child by SIGALRM (status 114), not the suite
        Stream s = stream(server.url("/v1/chat/completions"), "{}", {}, o);
        auto items = drain(s);
        if (items.size() != 1 || !items[0].is_error()) return 2;
        return items[0].error->code == ErrorCode::timeout_read ? 0 : 3;
    });
    CHECK(code == 0);
}
#endif

TEST_CASE("first_event_timeout counts from the request's start, the head's wait included") {
    const std::string backend = GENERATE("window", "pull");
    const bool head_sent = GENERATE(false, true);
    INFO("backend " << backend << ", head sent " << head_sent);
    FaultServer server([&](Peer& peer, std::uint64_t index) {
        if (head_sent) return comments_forever(peer, index);
        if (peer.read_request()) peer.stall();
    });
    Options o = with_backend(backend);
    o.read_timeout = 60s;
    o.first_event_timeout = 300ms;
    o.event_idle_timeout = 60s;  // the earlier deadline is the one that fires, and is named
    Stream s = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK(items[0].error->code == ErrorCode::timeout_read);
    CHECK_THAT(items[0].error->message, Catch::Contains("first_event_timeout"));
}

TEST_CASE("a slow but steady stream never trips event_idle_timeout, however long it lasts") {
    const std::string backend = GENERATE("window", "pull");
    INFO("backend " << backend);
    // Eight events 250 ms apart, comments between them: the stream lasts
    // about 2 s, longer than the 1.5 s idle deadline, and no gap comes near it.
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request() || !peer.send(kSseHead)) return;
        for (int i = 0; i < 8; ++i) {
            std::this_thread::sleep_for(125ms);
            if (!peer.send(chunk(": keep-alive\n\n"))) return;
            std::this_thread::sleep_for(125ms);
            if (!peer.send(chunk("data: token " + std::to_string(i) + "\n\n"))) return;
        }
        peer.send(chunk("data: [DONE]\n\n") + "0\r\n\r\n");
    });
    Options o = with_backend(backend);
    o.event_idle_timeout = 1500ms;
    o.first_event_timeout = 1500ms;
    Stream s = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    auto items = drain(s);
    REQUIRE(items.size() == 9);
    for (int i = 0; i < 8; ++i) CHECK(items[i].event.data == "token " + std::to_string(i));
    CHECK(items[8].is_done());
}

TEST_CASE("is_content_event leaves events out of the deadline: pings alone time out") {
    const std::string backend = GENERATE("window", "pull");
    INFO("backend " << backend);
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (!peer.read_request() || !peer.send(kSseHead)) return;
        if (!peer.send(chunk("data: real\n\n"))) return;
        while (!peer.stopping() && peer.send(chunk("event: ping\ndata: {}\n\n")))
            std::this_thread::sleep_for(20ms);
    });
    Options o = with_backend(backend);
    o.read_timeout = 60s;
    o.event_idle_timeout = 300ms;
    o.is_content_event = [](const EventView& e) { return e.type != "ping"; };
    Stream s = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    int pings = 0;
    std::optional<Error> error;
    std::vector<std::string> data;
    while (auto item = s.next()) {
        if (item->is_error()) error = item->error;
        if (item->is_event() && item->event.type == "ping") ++pings;
        if (item->is_event() && item->event.type != "ping") data.push_back(item->event.data);
    }
    CHECK(data == std::vector<std::string>{"real"});
    CHECK(pings > 0);  // handed out as events all the same
    REQUIRE(error);
    CHECK(error->code == ErrorCode::timeout_read);
}

TEST_CASE("content deadlines come from Config too, and the call's options win") {
    FaultServer server(comments_forever);
    Config config;
    config.event_idle_timeout = 300ms;
    configure(config);
    Options o = with_backend("pull");
    o.read_timeout = 60s;
    Stream from_config = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    auto items = drain(from_config);
    o.event_idle_timeout = 200ms;
    Stream from_options = stream(server.url("/v1/chat/completions"), "{}", {}, o);
    auto items_with_options = drain(from_options);
    configure(Config{});
    REQUIRE(items.size() == 1);
    REQUIRE(items[0].is_error());
    CHECK_THAT(items[0].error->message, Catch::Contains("for 300 ms"));
    REQUIRE(items_with_options.size() == 1);
    REQUIRE(items_with_options[0].is_error());
    CHECK_THAT(items_with_options[0].error->message, Catch::Contains("for 200 ms"));
}

TEST_CASE("the library puts little in every thread's static TLS block") {
    // glibc sets up the static TLS block of every thread a program starts
    // (each stream's reader, and the application's own threads): a large
    // thread_local object there costs every thread a stack page. The library
    // is linked into this test program, whose own TLS segment holds its
    // thread_locals (a retry engine's 2.5 KB of state once did).
    std::size_t program_tls = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* out) {
            if (info->dlpi_name && info->dlpi_name[0] != '\0') return 0;  // the program only
            for (int i = 0; i < info->dlpi_phnum; ++i)
                if (info->dlpi_phdr[i].p_type == PT_TLS)
                    *static_cast<std::size_t*>(out) += info->dlpi_phdr[i].p_memsz;
            return 0;
        },
        &program_tls);
    INFO("static TLS of this program: " << program_tls << " bytes");
    CHECK(program_tls < 1024);
}
