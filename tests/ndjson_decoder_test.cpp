#include "decoder_fixtures.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("NDJSON fixtures decode the same whole, byte by byte and at random splits") {
    CHECK(check_fixtures("ndjson", [] { return make_ndjson_decoder(); }) >= 5);
}

TEST_CASE("an NDJSON line over the cap is buffer_overflow") {
    std::string line = "\"" + std::string(100, 'q') + "\"\n";
    CHECK(run_decoder([] { return make_ndjson_decoder(102); }, line, {}).outcome == "clean");
    CHECK(run_decoder([] { return make_ndjson_decoder(101); }, line, {}).outcome ==
          "buffer_overflow");
}
