// The byte window: a slow consumer bounds memory and, through TCP, the server.

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "fault_server.hpp"
#include "firehose.hpp"
#include "nous/http/stream.hpp"
#include "test_helpers.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kKiB = 1024;
constexpr int kClientReceiveBuffer = 64 * 1024;

Options windowed(std::size_t high, std::size_t low) {
    Options o;
    o.max_retries = 0;
    o.window_high_bytes = high;
    o.window_low_bytes = low;
    o.receive_buffer_bytes = kClientReceiveBuffer;
    return o;
}

}  // namespace

TEST_CASE(
    "a stalled consumer: in-flight bytes stay under high + one chunk, the server is held back by "
    "TCP") {
    constexpr std::size_t high = 1024 * kKiB, low = 256 * kKiB;
    constexpr std::uint64_t total = 64ull << 20;
    Firehose firehose(total);
    Stream s = stream(firehose.server.url(), "{}", {}, windowed(high, low));
    REQUIRE(s.next()->is_event());
    // The consumer stalls. The reader must park and the server's sends must block.
    REQUIRE(wait_until([&] { return s.stats().parks >= 1 && firehose.blocked.load(); }));
    const auto stats = s.stats();
    constexpr std::size_t chunk = 64 * kKiB;  // one socket read at most
    CHECK(stats.peak_inflight_bytes <= high + chunk);
    // What the server got rid of: the window, one chunk, the receive and send
    // buffers (the kernel doubles both for bookkeeping), and framing slack.
    const std::uint64_t bound =
        high + chunk + 2 * kClientReceiveBuffer + 2 * kServerSendBuffer + 64 * kKiB;
    CHECK(firehose.written.load() <= bound);
    CHECK(firehose.written.load() < total / 10);
    // The consumer resumes: every event arrives, nothing was lost.
    int events = 1;
    while (auto item = s.next()) {
        REQUIRE(item->is_event());
        ++events;
    }
    CHECK(events == firehose.events.load());
    CHECK(s.stats().peak_inflight_bytes <= high + chunk);
    CHECK(s.stats().parks >= 1);
    CHECK(s.stats().parked.count() > 0);
}

TEST_CASE(
    "parked past the maximum wait: the request is aborted and the next item is "
    "backpressure_overflow") {
    Firehose firehose(256ull << 20);
    Options o = windowed(512 * kKiB, 128 * kKiB);
    o.window_max_park = 200ms;
    Stream s = stream(firehose.server.url(), "{}", {}, o);
    REQUIRE(s.next()->is_event());
    // The reader parks, waits 200 ms, aborts: the server sees the connection go.
    REQUIRE(wait_until([&] { return firehose.peer_gone.load(); }));
    // Events already decoded from the first chunk come first (a 64 KiB read
    // holds at most 4 of these 16 KiB events); then the overflow, at once.
    auto item = s.next();
    int decoded_before = 0;
    while (item && item->is_event()) {
        ++decoded_before;
        item = s.next();
    }
    CHECK(decoded_before <= 4);
    REQUIRE(item);
    REQUIRE(item->is_error());
    CHECK(item->error->code == ErrorCode::backpressure_overflow);
    CHECK(item->error->inflight_bytes >= 128 * kKiB);
    CHECK_FALSE(s.next().has_value());
}

TEST_CASE("a parked reader is cancelled promptly, by cancel() or by dropping the handle") {
    const std::size_t before = live_streams();
    for (bool drop : {false, true}) {
        INFO("drop the handle: " << drop);
        Firehose firehose(256ull << 20);
        std::optional<Stream> s(
            stream(firehose.server.url(), "{}", {}, windowed(512 * kKiB, 128 * kKiB)));
        REQUIRE(s->next()->is_event());
        REQUIRE(wait_until([&] { return s->stats().parks >= 1; }));
        if (drop) {
            s.reset();  // joins the reader: a hang here fails the test by its timeout
        } else {
            std::thread canceller([&] { s->cancel(); });
            canceller.join();
            auto item = s->next();
            REQUIRE(item);
            CHECK(item->error->code == ErrorCode::cancelled);
            s.reset();
        }
        CHECK(wait_until([&] { return firehose.peer_gone.load(); }));
    }
    CHECK(live_streams() == before);
}

TEST_CASE("a consumer that keeps up receives every event") {
    Firehose firehose(8ull << 20);
    Stream s = stream(firehose.server.url(), "{}", {}, windowed(4096 * kKiB, 1024 * kKiB));
    int events = 0;
    while (auto item = s.next()) events += item->is_event();
    CHECK(events == firehose.events.load());
    CHECK(s.stats().bytes >= 8ull << 20);
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

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
