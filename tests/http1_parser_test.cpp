// Every fixture runs whole, byte by byte, and at random splits, and must give
// the same status, body and outcome each way.

#include "codec/http1_parser.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "decoder_fixtures.hpp"  // every_byte, random_cuts, slurp
#include "fault_server.hpp"
#include "nous/http/client.hpp"
#include "test_helpers.hpp"

using namespace nous::http::detail;
using namespace std::chrono_literals;
using nous::http::ErrorCode;
using nous::http::Options;
using nous::http::post;
using nous::test::chunk;
using nous::test::FaultServer;
using nous::test::no_retry;
using nous::test::ok_response;
using nous::test::Peer;

namespace {

struct Decoded {
    int status = 0;
    std::string body;
    std::string outcome;  // complete | truncated | protocol
    bool keep_alive = false;
    bool operator==(const Decoded&) const = default;
};

/// Feeds `raw` in the given pieces through the same state machine the exchange uses.
Decoded decode(const std::string& raw, const std::vector<std::size_t>& cuts) {
    Decoded d;
    HeadParser head;
    BodyFramer framer;
    bool in_body = false;
    std::size_t pos = 0;
    ResponseHead h;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        std::size_t end = i < cuts.size() ? cuts[i] : raw.size();
        std::string_view piece(raw.data() + pos, end - pos);
        pos = end;
        while (!piece.empty()) {
            if (!in_body) {
                std::size_t used = 0;
                auto s = head.feed(piece, used);
                piece.remove_prefix(used);
                if (s == HeadParser::Status::error) {
                    d.outcome = "protocol";
                    return d;
                }
                if (s == HeadParser::Status::need_more) continue;
                h = head.take_head();
                if (h.status < 200) {
                    head.reset();
                    continue;
                }
                d.status = h.status;
                d.keep_alive = h.keep_alive();
                auto mode = body_mode_for(h);
                framer.start(mode, h.content_length.value_or(0));
                in_body = true;
                continue;
            }
            std::size_t used = framer.feed(piece.data(), piece.size(), d.body);
            piece.remove_prefix(used);
            if (framer.failed()) {
                d.outcome = "protocol";
                return d;
            }
            if (framer.done()) break;
        }
    }
    if (!in_body) {
        d.outcome = "truncated";
        d.status = 0;
        return d;
    }
    d.outcome = framer.complete_at_eof() ? "complete" : "truncated";
    if (d.outcome == "complete" && framer.mode() == BodyFramer::Mode::until_close)
        d.keep_alive = false;
    return d;
}

}  // namespace

TEST_CASE("HTTP/1 fixtures decode the same whole, byte by byte and at random splits") {
    std::filesystem::path dir = std::filesystem::path(NOUS_FIXTURES) / "http1";
    std::mt19937 rng(12345);
    int fixtures = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".http") continue;
        ++fixtures;
        auto stem = entry.path().stem().string();
        INFO("fixture " << stem);
        std::string raw = nous::test::slurp(entry.path());
        std::istringstream expect(nous::test::slurp(dir / (stem + ".expect")));
        Decoded want;
        std::string key;
        while (expect >> key) {
            if (key == "status") expect >> want.status;
            if (key == "outcome") expect >> want.outcome;
            if (key == "keepalive") expect >> want.keep_alive;
        }
        if (std::filesystem::exists(dir / (stem + ".body")))
            want.body = nous::test::slurp(dir / (stem + ".body"));

        Decoded whole = decode(raw, {});
        CHECK(whole.status == want.status);
        CHECK(whole.outcome == want.outcome);
        if (want.outcome != "protocol") CHECK(whole.body == want.body);
        if (want.outcome == "complete") CHECK(whole.keep_alive == want.keep_alive);

        CHECK(decode(raw, nous::test::every_byte(raw.size())) == whole);
        for (int i = 0; i < 50; ++i)
            CHECK(decode(raw, nous::test::random_cuts(raw.size(), rng)) == whole);
    }
    CHECK(fixtures >= 15);
}

TEST_CASE("more than 100 header fields is a protocol error") {
    std::string raw = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 101; ++i) raw += "X-H" + std::to_string(i) + ": v\r\n";
    raw += "Content-Length: 0\r\n\r\n";
    HeadParser p;
    std::size_t used = 0;
    CHECK(p.feed(raw, used) == HeadParser::Status::error);
    CHECK(p.error().find("100") != std::string::npos);
}

TEST_CASE("a head over 64 KiB is a protocol error, a 9 KiB header value is fine") {
    std::string big_value(
        9000, 'v');  // POCO refuses values over 8 KiB; we allow up to the 64 KiB head cap
    std::string ok = "HTTP/1.1 200 OK\r\nX-Big: " + big_value + "\r\nContent-Length: 0\r\n\r\n";
    HeadParser p;
    std::size_t used = 0;
    REQUIRE(p.feed(ok, used) == HeadParser::Status::done);
    CHECK(p.head().headers[0].second.size() == 9000);

    std::string huge = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70000, 'v') + "\r\n\r\n";
    HeadParser q;
    CHECK(q.feed(huge, used) == HeadParser::Status::error);
}

TEST_CASE("head scanning is linear when fed one byte at a time") {
    // 60 KiB of headers fed byte by byte: each byte is examined at most 4 times.
    std::string raw = "HTTP/1.1 200 OK\r\n";
    while (raw.size() < 60000) raw += "X-Pad: " + std::string(90, 'p') + "\r\n";
    raw += "\r\n";
    HeadParser p;
    HeadParser::Status s = HeadParser::Status::need_more;
    for (char c : raw) {
        std::size_t used = 0;
        s = p.feed(std::string_view(&c, 1), used);
        if (s != HeadParser::Status::need_more) break;
    }
    CHECK(s == HeadParser::Status::error);  // more than 100 fields: found when the head is complete
    CHECK(p.bytes_scanned() <= 4 * raw.size());
    CHECK(p.bytes_scanned() >= raw.size() - 4);
}

TEST_CASE("the direct read path fills Content-Length bodies without framing bytes") {
    BodyFramer f;
    f.start(BodyFramer::Mode::length, 10);
    CHECK(f.direct_read_limit() == 10);
    f.direct_received(4);
    CHECK(f.direct_read_limit() == 6);
    f.direct_received(6);
    CHECK(f.done());
}

TEST_CASE("a chunk-size line without end is bounded") {
    BodyFramer f;
    f.start(BodyFramer::Mode::chunked);
    std::string out;
    std::string junk(5000, '1');
    f.feed(junk.data(), junk.size(), out);
    CHECK(f.failed());
}

namespace {

/// A chunked body through the framer: the bytes and verdict, fed whole or one
/// byte at a time, copied (feed) or in place (next_data).
std::string frame_chunked(const std::string& body, bool byte_by_byte, bool in_place) {
    BodyFramer f;
    f.start(BodyFramer::Mode::chunked);
    std::string out;
    const std::size_t step = byte_by_byte ? 1 : body.size();
    for (std::size_t at = 0; at < body.size() && !f.done() && !f.failed();) {
        const std::size_t n = std::min(step, body.size() - at);
        std::size_t used = 0;
        if (in_place) {
            std::string_view data;
            used = f.next_data(body.data() + at, n, data);
            out.append(data);
        } else {
            used = f.feed(body.data() + at, n, out);
        }
        if (f.failed()) break;
        if (used == 0) break;
        at += used;
    }
    if (f.failed()) return out + "|failed: " + f.error();
    return out + (f.done() ? "|done" : "|cut");
}

}  // namespace

TEST_CASE("the chunk framer's in-place line steps decide as its general line step") {
    // Whole, the usual lines ("HEX\r\n", the CRLF after data) are read in
    // place; byte by byte every line goes through the general step.
    const std::vector<std::pair<std::string, std::string>> bodies = {
        {"5\r\nhello\r\n0\r\n\r\n", "hello|done"},
        {"A\r\n0123456789\r\n0\r\n\r\n", "0123456789|done"},
        {"a\r\n0123456789\r\n0\r\n\r\n", "0123456789|done"},
        {"0005\r\nhello\r\n0\r\n\r\n", "hello|done"},
        {"5;name=value\r\nhello\r\n0\r\n\r\n", "hello|done"},
        {"5 \r\nhello\r\n0\r\n\r\n", "hello|done"},
        {"5\nhello\n0\n\n", "hello|done"},
        {"0000000000000005\r\nhello\r\n0\r\n\r\n", "hello|done"},   // 16 digits
        {"00000000000000005\r\nhello\r\n0\r\n\r\n", "hello|done"},  // 17: general step
        {"ffffffffffffffff\r\nab", "ab|cut"},                       // the largest size
        {"10000000000000000\r\nab", "|failed: bad chunk size '10000000000000000'"},
        {"0x5\r\nhello\r\n", "|failed: bad chunk size '0x5'"},
        {"g\r\n", "|failed: bad chunk size 'g'"},
        {"\r\n", "|failed: bad chunk size ''"},
        {"5\rhello\r\n", "|failed: bad chunk size '5\rhello'"},
        {"5\r\nhelloXY0\r\n\r\n", "hello|failed: missing CRLF after chunk data"},
        {"5\r\nhello\r\r\n0\r\n\r\n", "hello|failed: missing CRLF after chunk data"},
        {"5\r\nhello\r\n0\r\nx-t: 1\r\n\r\n", "hello|done"},
        {"5\r\nhello\r\n0\r\n", "hello|cut"},
    };
    for (const auto& [body, want] : bodies) {
        INFO(body);
        std::string whole = frame_chunked(body, false, false);
        CHECK(whole == want);
        CHECK(frame_chunked(body, true, false) == whole);
        CHECK(frame_chunked(body, false, true) == whole);
        CHECK(frame_chunked(body, true, true) == whole);
    }
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

namespace {
ResponseHead parse_head(const std::string& text, std::string* error = nullptr) {
    HeadParser parser;
    std::size_t used = 0;
    auto status = parser.feed(text, used);
    if (status == HeadParser::Status::error && error) *error = parser.error();
    return status == HeadParser::Status::done ? parser.head() : ResponseHead{};
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
