#include "nous/http/json.hpp"

#include <catch2/catch.hpp>

#include "fault_server.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("post_json sends JSON and returns the parsed document") {
    MockServer server;
    server.start();
    rapidjson::Document body(rapidjson::kObjectType);
    auto& a = body.GetAllocator();
    body.AddMember("model", "mock-json", a);
    rapidjson::Value messages(rapidjson::kArrayType);
    body.AddMember("messages", messages, a);
    auto r = post_json(server.base_url() + "/v1/chat/completions", body);
    REQUIRE(r.ok());
    CHECK(std::string((*r->document)["model"].GetString()) == "mock-json");
    CHECK(server.last_request().body == R"({"model":"mock-json","messages":[]})");
    CHECK(server.last_request().header("content-type") ==
          std::optional<std::string>("application/json"));
}

TEST_CASE("a 2xx body that is not JSON is a protocol error carrying the raw body") {
    nous::test::FaultServer server([](nous::test::Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(nous::test::ok_response("<html>oops</html>"));
    });
    rapidjson::Document body(rapidjson::kObjectType);
    auto r = post_json(server.url(), body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::protocol);
    CHECK(r.error().body == "<html>oops</html>");
    CHECK(r.error().status == 200);
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

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

TEST_CASE("a number past a double's range is refused, never held as infinity") {
    // RapidJSON 1.1 reads "1.8e308" as infinity without an error, and its
    // Writer stops at infinity: sent on, the value would be broken JSON.
    for (const char* text : {"1.8e308", "[1,{\"n\":-1.8e308}]", "{\"a\":[[2e308]]}"}) {
        INFO(text);
        auto parsed = parse_json(text);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().code == ErrorCode::protocol);
        CHECK_THAT(parsed.error().message, Catch::Contains("range of a double"));
    }
    // The largest double and the smallest denormal are in range; an
    // underflow reads as zero, as a double would.
    for (const char* text : {"1.7976931348623157e308", "[-1.7976931348623157e308]", "4.9e-324",
                             "1e-400", "123456789012345678901234567890"}) {
        INFO(text);
        auto parsed = parse_json(text);
        REQUIRE(parsed.ok());
        CHECK(to_json(*parsed.value()).find("inf") == std::string::npos);
    }
}
