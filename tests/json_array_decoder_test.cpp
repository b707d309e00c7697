#include "decoder_fixtures.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("JSON array fixtures decode the same whole, byte by byte and at random splits") {
    CHECK(check_fixtures("json_array", [] { return make_json_array_decoder(); }) >= 7);
}

TEST_CASE("every byte boundary of a Gemini-style stream gives the one-pass result") {
    std::string input =
        "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\\\"lo}\"}]}}]}\r\n,\r\n"
        "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" [world]\"}]}}]}\r\n]";
    auto make = [] { return make_json_array_decoder(); };
    auto whole = run_decoder(make, input, {});
    REQUIRE(whole.outcome == "clean");
    REQUIRE(whole.events.size() == 2);
    for (std::size_t cut = 1; cut < input.size(); ++cut)
        CHECK(run_decoder(make, input, {cut}) == whole);
}

TEST_CASE("one 8 MiB element decodes with linear work, over the cap is buffer_overflow") {
    std::string element = "{\"text\":\"" + std::string(8u << 20, 'w') + "\"}";
    std::string input = "[" + element + "]";
    std::vector<std::size_t> cuts;
    for (std::size_t at = 1400; at < input.size(); at += 1400) cuts.push_back(at);
    auto d = run_decoder([] { return make_json_array_decoder(); }, input, cuts);
    REQUIRE(d.outcome == "clean");
    REQUIRE(d.events.size() == 1);
    CHECK(d.events[0].data == element);
    CHECK(d.scanned <= input.size() + 8);
    CHECK(run_decoder([] { return make_json_array_decoder(1 << 20); }, input, cuts).outcome ==
          "buffer_overflow");
}
