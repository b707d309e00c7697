// The AWS event-stream decoder against botocore's vectors
// (tests/fixtures/aws_eventstream/): each positive message decodes to its
// event whole, byte by byte and at random splits, all of them in one body
// too; each negative one is malformed_stream however it is split; a message
// past 16 MiB, a body that ends inside a message, a header of an unknown
// type and one past max_event_bytes are refused.

#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "nous/http/decoder.hpp"

using namespace nous::http;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(NOUS_FIXTURES) + "/aws_eventstream/" + name, std::ios::binary);
    REQUIRE(in);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Decoded {
    std::vector<Event> events;
    std::optional<Error> error;
};

Decoded decode(std::string_view body, const std::vector<std::size_t>& cuts,
               std::size_t cap = defaults::max_event_bytes) {
    auto decoder = make_aws_event_stream_decoder(cap);
    Decoded d;
    bool done = false;
    std::size_t from = 0;
    for (std::size_t cut : cuts) {
        if ((d.error = decoder->feed(body.substr(from, cut - from), d.events, done))) return d;
        from = cut;
    }
    if ((d.error = decoder->feed(body.substr(from), d.events, done))) return d;
    d.error = decoder->finish(d.events);
    return d;
}

std::vector<std::vector<std::size_t>> splits_of(std::size_t size, std::mt19937& random) {
    std::vector<std::vector<std::size_t>> all = {{}};
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < size; ++i) every.push_back(i);
    all.push_back(every);
    for (int round = 0; round < 20; ++round) {
        std::vector<std::size_t> cuts;
        for (std::size_t i = 1; i < size; ++i)
            if (random() % 5 == 0) cuts.push_back(i);
        all.push_back(cuts);
    }
    return all;
}

/// A message with correct CRCs: `headers` raw (any types), then `payload`
/// (the encoder's headers are strings only).
std::string message(std::string_view headers, std::string_view payload) {
    std::string m;
    auto put = [&m](std::uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8) m += static_cast<char>((v >> shift) & 0xFF);
    };
    // A reference CRC-32, bit by bit: independent of the decoder's table.
    auto crc = [](std::string_view data) {
        std::uint32_t c = 0xFFFFFFFFu;
        for (unsigned char byte : data) {
            c ^= byte;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        return ~c;
    };
    put(static_cast<std::uint32_t>(16 + headers.size() + payload.size()));
    put(static_cast<std::uint32_t>(headers.size()));
    put(crc(m));
    m.append(headers);
    m.append(payload);
    put(crc(m));
    return m;
}

}  // namespace

TEST_CASE("botocore's positive vectors: one event each, at any split, and all in one body") {
    std::mt19937 random(5);
    std::istringstream expected(fixture("expected.tsv"));
    std::string line, all;
    std::vector<std::pair<std::string, std::string>> want_all;
    while (std::getline(expected, line)) {
        const auto tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
        const std::string name = line.substr(0, tab1);
        const std::string type = line.substr(tab1 + 1, tab2 - tab1 - 1);
        const std::string data = line.substr(tab2 + 1);
        const std::string body = fixture(name);
        all += body;
        want_all.emplace_back(type, data);
        for (const auto& cuts : splits_of(body.size(), random)) {
            INFO(name << " in " << cuts.size() + 1 << " pieces");
            const Decoded d = decode(body, cuts);
            REQUIRE_FALSE(d.error);
            REQUIRE(d.events.size() == 1);
            CHECK(d.events[0].type == type);
            CHECK(d.events[0].data == data);
        }
    }
    REQUIRE(want_all.size() == 9);
    for (const auto& cuts : splits_of(all.size(), random)) {
        const Decoded d = decode(all, cuts);
        REQUIRE_FALSE(d.error);
        REQUIRE(d.events.size() == want_all.size());
        for (std::size_t i = 0; i < want_all.size(); ++i) {
            CHECK(d.events[i].type == want_all[i].first);
            CHECK(d.events[i].data == want_all[i].second);
        }
    }
}

TEST_CASE("botocore's negative vectors are malformed_stream at any split") {
    std::mt19937 random(6);
    for (const char* name : {"bad_corrupted_length.bin", "bad_corrupted_payload.bin",
                             "bad_corrupted_headers.bin", "bad_corrupted_header_length.bin",
                             "bad_duplicate_header.bin", "bad_invalid_headers_length.bin"}) {
        const std::string body = fixture(name);
        for (const auto& cuts : splits_of(body.size(), random)) {
            INFO(name << " in " << cuts.size() + 1 << " pieces");
            const Decoded d = decode(body, cuts);
            REQUIRE(d.error);
            CHECK(d.error->code == ErrorCode::malformed_stream);
        }
    }
}

TEST_CASE("past 16 MiB, cut short, an unknown header type, past max_event_bytes: refused") {
    // botocore's InvalidPayloadLength: 24 MiB of payload with correct CRCs.
    const std::string huge = message("", std::string(24u << 20, '0'));
    auto too_big = decode(huge, {});
    REQUIRE(too_big.error);
    CHECK(too_big.error->code == ErrorCode::malformed_stream);
    // Refused from its prelude: the 24 MiB never have to arrive.
    auto early = decode(std::string_view(huge).substr(0, 12), {});
    REQUIRE(early.error);
    CHECK(early.error->code == ErrorCode::malformed_stream);

    const std::string event = encode_aws_event_stream_message(
        {{":message-type", "event"}, {":event-type", "contentBlockDelta"}},
        R"({"delta":{"text":"hi"}})");
    // The encoder and an independent writer agree byte for byte.
    std::string headers;
    for (const auto& [name, value] : {std::pair<std::string, std::string>{":message-type", "event"},
                                      {":event-type", "contentBlockDelta"}}) {
        headers += static_cast<char>(name.size());
        headers += name;
        headers += '\x07';
        headers += '\0';
        headers += static_cast<char>(value.size());
        headers += value;
    }
    CHECK(event == message(headers, R"({"delta":{"text":"hi"}})"));
    for (std::size_t n = 1; n < event.size(); ++n) {
        const Decoded cut = decode(std::string_view(event).substr(0, n), {});
        INFO("cut at " << n);
        REQUIRE(cut.error);
        CHECK(cut.error->code == ErrorCode::malformed_stream);
    }
    const Decoded whole = decode(event, {});
    REQUIRE_FALSE(whole.error);
    REQUIRE(whole.events.size() == 1);
    CHECK(whole.events[0].type == "contentBlockDelta");

    std::string unknown_type = "\x04name\x0a";
    auto unknown = decode(message(unknown_type, ""), {});
    REQUIRE(unknown.error);
    CHECK(unknown.error->code == ErrorCode::malformed_stream);

    auto over_cap = decode(event, {}, 32);
    REQUIRE(over_cap.error);
    CHECK(over_cap.error->code == ErrorCode::buffer_overflow);

    const std::string exception = encode_aws_event_stream_message(
        {{":message-type", "exception"}, {":exception-type", "throttlingException"}},
        R"({"message":"slow down"})");
    const Decoded thrown = decode(exception, {});
    REQUIRE_FALSE(thrown.error);
    REQUIRE(thrown.events.size() == 1);
    CHECK(thrown.events[0].type == "exception:throttlingException");
    CHECK(thrown.events[0].data == R"({"message":"slow down"})");
}
