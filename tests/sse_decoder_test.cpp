#include <chrono>

#include "decoder_fixtures.hpp"
#include "test_helpers.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("SSE fixtures (WHATWG cases) decode the same whole, byte by byte and at random splits") {
    CHECK(check_fixtures("sse", [] { return make_sse_decoder(); }) >= 14);
}

TEST_CASE("an event with exactly the cap of data is delivered, one byte more is buffer_overflow") {
    constexpr std::size_t cap = 10u << 20;
    for (bool split_lines : {false, true}) {
        INFO("data split over two lines: " << split_lines);
        std::string data(cap, 'x');
        std::string input;
        if (split_lines) {
            data[cap / 2] = '\n';  // two data lines joined by \n, still `cap` bytes in all
            input =
                "data: " + data.substr(0, cap / 2) + "\ndata: " + data.substr(cap / 2 + 1) + "\n\n";
        } else {
            input = "data: " + data + "\n\n";
        }
        auto ok = run_decoder([] { return make_sse_decoder(); }, input, {});
        REQUIRE(ok.outcome == "clean");
        REQUIRE(ok.events.size() == 1);
        CHECK(ok.events[0].data == data);
        std::string over = split_lines ? "data: " + data.substr(0, cap / 2) +
                                             "\ndata: " + data.substr(cap / 2 + 1) + "y\n\n"
                                       : "data: " + data + "y\n\n";
        CHECK(run_decoder([] { return make_sse_decoder(); }, over, {}).outcome ==
              "buffer_overflow");
    }
    // A single line longer than the cap plus its field name, with no newline yet.
    std::string endless = "event: " + std::string(cap + 8, 'e');
    CHECK(run_decoder([] { return make_sse_decoder(); }, endless, every_byte(0)).outcome ==
          "buffer_overflow");
}

TEST_CASE("one 8 MiB event split into 1400-byte chunks is decoded with linear work") {
    std::string data(8u << 20, 'z');
    std::string input = "data: " + data + "\n\ndata: [DONE]\n\n";
    std::vector<std::size_t> cuts;
    for (std::size_t at = 1400; at < input.size(); at += 1400) cuts.push_back(at);
    auto d = run_decoder([] { return make_sse_decoder(); }, input, cuts);
    REQUIRE(d.outcome == "done");
    REQUIRE(d.events.size() == 1);
    CHECK(d.events[0].data.size() == data.size());
    auto decoder = make_sse_decoder();
    std::vector<Event> out;
    bool done = false;
    for (std::size_t pos = 0; pos < input.size() && !done; pos += 1400)
        decoder->feed(std::string_view(input).substr(pos, 1400), out, done);
    auto* counting = dynamic_cast<detail::CountingDecoder*>(decoder.get());
    REQUIRE(counting);
    CHECK(counting->bytes_scanned() <= input.size() + 8);  // every byte examined once
}

TEST_CASE("the raw decoder passes bytes through and stops after the DONE event") {
    std::string input = "data: a\r\n\r\ndata: [DONE]\r\n\r\ndata: after\n\n";
    auto whole = run_decoder([] { return make_raw_decoder(); }, input, {});
    CHECK(whole.outcome == "done");
    std::string joined;
    for (auto& e : whole.events) joined += e.data;
    CHECK(joined == "data: a\r\n\r\ndata: [DONE]\r\n\r\n");
    auto bytes = run_decoder([] { return make_raw_decoder(); }, input, every_byte(input.size()));
    joined.clear();
    for (auto& e : bytes.events) joined += e.data;
    CHECK(joined == "data: a\r\n\r\ndata: [DONE]\r\n\r\n");
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

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
