#include "nous/http/json.hpp"

#include <catch2/catch.hpp>

#include "fault_server.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;

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
