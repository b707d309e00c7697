// Embeddings: each format's fixtures (base64 and floats, shuffled indexes, a
// server that ignores base64, escaped slashes), every prefix of each, the
// counts, widths and numbers that must be `protocol`, the nearest float,
// the request bodies, and embed() against the mock: batching in order, the
// token budget, requests in flight, a retried batch, a failing batch named.

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "llm/embeddings/base64_floats.hpp"
#include "llm/embeddings/body_reader.hpp"
#include "llm/embeddings/embedding_format.hpp"
#include "llm/embeddings/vector_json.hpp"
#include "mock/embedding_replies.hpp"
#include "nous/http/testing.hpp"
#include "nous/llm/embed.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockRequest;
using nous::http::MockResponse;
using nous::http::MockServer;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(NOUS_FIXTURES) + "/embeddings/" + name, std::ios::binary);
    REQUIRE(in);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::vector<float> kRows = {0.5f, -0.25f, 1.0f, 0.125f, 2.0f, -3.5f};

struct Case {
    const char* name;
    Provider provider;
};
const Case kGood[] = {{"openai_base64.json", Provider::openai},
                      {"openai_float.json", Provider::openai},
                      {"openai_shuffled.json", Provider::openai},
                      {"openai_escaped_slash.json", Provider::openai},
                      {"gemini.json", Provider::gemini}};

/// An OpenAI body whose second row's embedding is `value` (a JSON token or string).
std::string openai_with(const std::string& value) {
    return R"({"data":[{"index":0,"embedding":[0.5,-0.25,1]},{"index":1,"embedding":)" + value +
           "}]}";
}

/// The mock's vector of `text`, `dims` wide.
std::vector<float> mock_vector(const std::string& text, std::size_t dims) {
    std::vector<float> v(dims);
    nous::http::mock::mock_embedding(text, dims, v.data());
    return v;
}

EmbedRequest request_to(const MockServer& server, Provider provider, std::size_t inputs,
                        int dims = 8) {
    EmbedRequest r;
    r.provider = provider;
    r.base_url = server.base_url() + (provider == Provider::gemini ? "/v1beta" : "/v1");
    r.api_key = "sk-test";
    r.model = "text-embedding-mock";
    r.dimensions = dims;
    for (std::size_t i = 0; i < inputs; ++i) r.inputs.push_back("text number " + std::to_string(i));
    return r;
}

void require_mock_rows(const Embeddings& e, const EmbedRequest& r) {
    REQUIRE(e.count == r.inputs.size());
    REQUIRE(e.dimensions == static_cast<std::size_t>(*r.dimensions));
    for (std::size_t i = 0; i < e.count; ++i) {
        const auto want = mock_vector(r.inputs[i], e.dimensions);
        const auto got = e.row(i);
        REQUIRE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
    }
}

/// A body read as it arrives, in pieces cut at `cuts` (ascending offsets):
/// the matrix (count rows) and the reader's verdict ("" when none).
struct PieceRead {
    std::vector<float> values;
    std::string bad;
};
PieceRead read_in_pieces(Provider provider, std::string_view body, std::size_t count,
                         const std::vector<std::size_t>& cuts) {
    const auto& format = provider == Provider::gemini ? detail::gemini_embedding_format()
                                                      : detail::openai_embedding_format();
    detail::EmbeddingMatrix matrix(count, 0);
    detail::BatchReading batch{matrix, 0, count, std::nullopt, {}, {}, {}};
    detail::EmbeddingBodyReader reader(format, batch, std::size_t{1} << 20);
    std::optional<std::string> bad;
    std::size_t from = 0;
    for (std::size_t cut : cuts) {
        if (!bad) bad = reader.feed(body.substr(from, cut - from));
        from = cut;
    }
    if (!bad) bad = reader.feed(body.substr(from));
    if (!bad) bad = reader.finish();
    return {bad ? std::vector<float>{} : matrix.take(), bad.value_or("")};
}

/// No sleeping between retries: the test's time is not the backoff's.
const nous::http::testing::Hooks kNoSleep{{}, [](nous::http::Milliseconds) {}, [] { return 0.0; }};

}  // namespace

TEST_CASE("each format's fixture decodes to the same matrix, rows by index") {
    for (const Case& c : kGood) {
        INFO(c.name);
        auto e = parse_embedding_response(c.provider, fixture(c.name), 2);
        REQUIRE(e);
        CHECK(e->count == 2);
        CHECK(e->dimensions == 3);
        CHECK(e->values == kRows);
        if (c.provider == Provider::openai && std::string(c.name) != "openai_escaped_slash.json") {
            REQUIRE(e->usage);
            CHECK(e->usage->input_tokens == 5);
        }
        // The width the caller expects is checked too.
        CHECK(parse_embedding_response(c.provider, fixture(c.name), 2, 3));
        auto wrong = parse_embedding_response(c.provider, fixture(c.name), 2, 4);
        REQUIRE_FALSE(wrong);
        CHECK(wrong.error().code == ErrorCode::protocol);
    }
}

TEST_CASE("each fixture read as it arrives: whole, byte by byte and at random splits, one result") {
    std::mt19937 random(7);
    std::vector<std::string> bodies;
    std::vector<Provider> providers;
    for (const Case& c : kGood) {
        bodies.push_back(fixture(c.name));
        providers.push_back(c.provider);
    }
    // And bodies the reader must refuse, whatever the split.
    for (const char* bad :
         {R"({"data":[{"index":0,"embedding":[0.5,-0.25,1]}]})",
          R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":0,"embedding":[1,2,3]}]})",
          R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2]}]})",
          R"({"data":[],"data":[]})", R"({"data":[1,2]} x)", R"({"usage":{}})"}) {
        bodies.emplace_back(bad);
        providers.push_back(Provider::openai);
    }
    for (std::size_t b = 0; b < bodies.size(); ++b) {
        const std::string& body = bodies[b];
        INFO(body);
        const PieceRead whole = read_in_pieces(providers[b], body, 2, {});
        if (b < std::size(kGood)) {
            REQUIRE(whole.bad.empty());
            CHECK(whole.values == kRows);
        } else {
            CHECK_FALSE(whole.bad.empty());
        }
        std::vector<std::size_t> every;
        for (std::size_t i = 1; i < body.size(); ++i) every.push_back(i);
        const PieceRead bytewise = read_in_pieces(providers[b], body, 2, every);
        CHECK(bytewise.values == whole.values);
        CHECK(bytewise.bad == whole.bad);
        for (int round = 0; round < 50; ++round) {
            std::vector<std::size_t> cuts;
            for (std::size_t i = 1; i < body.size(); ++i)
                if (random() % 7 == 0) cuts.push_back(i);
            const PieceRead split = read_in_pieces(providers[b], body, 2, cuts);
            CHECK(split.values == whole.values);
            CHECK(split.bad == whole.bad);
        }
    }
}

TEST_CASE("a value split over many pieces is scanned a bounded number of times") {
    // A 4 MiB member arriving 1 KiB at a time: the reader tries the
    // unfinished value again only each time the held text doubles, so 4,096
    // pieces cost a dozen attempts (one per piece would scan ~8 GB).
    const std::string body = R"({"model":")" + std::string(4u << 20, 'm') +
                             R"(","data":[{"index":0,"embedding":[1,2,3]}]})";
    detail::EmbeddingMatrix matrix(1, 0);
    detail::BatchReading batch{matrix, 0, 1, std::nullopt, {}, {}, {}};
    detail::EmbeddingBodyReader reader(detail::openai_embedding_format(), batch, body.size());
    for (std::size_t from = 0; from < body.size(); from += 1024)
        REQUIRE_FALSE(reader.feed(std::string_view(body).substr(from, 1024)));
    REQUIRE_FALSE(reader.finish());
    CHECK(matrix.take() == std::vector<float>{1, 2, 3});
    CHECK(reader.attempts_short() <= 16);
}

TEST_CASE("every prefix of every fixture is protocol, never a matrix") {
    for (const Case& c : kGood) {
        const std::string body = fixture(c.name);
        // Trailing whitespace is still the whole document.
        std::size_t whole = body.size();
        while (whole > 0 && std::isspace(static_cast<unsigned char>(body[whole - 1]))) --whole;
        for (std::size_t n = 0; n < whole; ++n) {
            auto e = parse_embedding_response(c.provider, std::string_view(body).substr(0, n), 2);
            INFO(c.name << " cut at " << n);
            REQUIRE_FALSE(e);
            REQUIRE(e.error().code == ErrorCode::protocol);
        }
    }
}

TEST_CASE("counts, widths, indexes and numbers that do not fit the request are protocol") {
    const std::vector<std::string> bad_tokens = {
        "[NaN,1,2]",
        "[Infinity,1,2]",
        "[-Infinity,1,2]",
        "[1e999,1,2]",
        "[01,1,2]",
        "[.5,1,2]",
        "[1.,1,2]",
        "[+1,1,2]",
        "[1e,1,2]",
        "[--1,1,2]",
        "[0x10,1,2]",
        "[1,2]",
        "[1,2,3,4]",
        "[1,2,3,]",
        "[1 2 3]",
        "[\"1\",2,3]",
        "[null,1,2]",
        "[true,1,2]",
        "[]",
        "{}",
        "null",
        "\"AAAAPgAAAEA\"",
        "\"AAAAPgAAAEAAAGD*\"",
        "\"AAAAPgAAAEAAAGDAAAAA\"",
        "\"AADAfwAAAEAAAGDA\"",  // base64 of a NaN first value
        "\"AACAfwAAAEAAAGDA\"",  // +Inf
        "\"AAAAPgAAAEAAAGDA\\n\"",
        "\"\""};
    for (const auto& token : bad_tokens) {
        INFO(token);
        auto e = parse_embedding_response(Provider::openai, openai_with(token), 2);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == ErrorCode::protocol);
    }
    const std::vector<std::string> bad_bodies = {
        R"({"data":[{"index":0,"embedding":[1,2,3]}]})",  // one row for two inputs
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]},{"index":2,"embedding":[1,2,3]}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":0,"embedding":[1,2,3]}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":5,"embedding":[1,2,3]}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":-1,"embedding":[1,2,3]}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"index":0,"embedding":[1,2,3]}]})",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3],"embedding":[1,2,3]}]})",
        R"({"object":"list"})",
        R"([])",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]} x)",
        R"({"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}],"usage":{"prompt_tokens":"5"}})",
    };
    for (const auto& body : bad_bodies) {
        INFO(body);
        auto e = parse_embedding_response(Provider::openai, body, 2);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == ErrorCode::protocol);
    }
    for (const std::string body : {R"({"embeddings":[{"values":[1,2,3]}]})",
                                   R"({"embeddings":[{"values":[1,2,3]},{"values":[1,2]}]})",
                                   R"({"embeddings":[{"values":[1,2,3]},{"other":1}]})",
                                   R"({"embeddings":[{"values":[1,2,3]},{"values":[1,NaN,3]}]})"}) {
        INFO(body);
        auto e = parse_embedding_response(Provider::gemini, body, 2);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == ErrorCode::protocol);
    }
    // An empty embedding is named as one, base64 or not.
    for (const std::string empty : {"\"\"", "[]"}) {
        INFO(empty);
        auto none = parse_embedding_response(Provider::openai, openai_with(empty), 2);
        REQUIRE_FALSE(none);
        CHECK_THAT(none.error().message, Catch::Contains("an embedding of 0 values"));
    }
    // An embedding wider than any model's is refused before the matrix is sized by it.
    std::string wide = "[";
    for (int i = 0; i < 70000; ++i) wide += i ? ",0" : "0";
    wide += "]";
    auto e = parse_embedding_response(Provider::openai, openai_with(wide), 2);
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::protocol);
}

TEST_CASE("base64 vectors: 32 characters at a time and one quad at a time agree, byte for byte") {
    // Every length from 0 to 80 floats crosses the 32-character blocks and
    // the tail; a byte outside the alphabet, or a non-finite value, at any
    // position is refused by both.
    static const std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::mt19937 random(11);
    auto encode = [&](const std::vector<float>& values) {
        std::string bytes(values.size() * 4, '\0');
        if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
        std::string out;
        for (std::size_t i = 0; i < bytes.size(); i += 3) {
            auto u = [&](std::size_t k) {
                return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u;
            };
            const unsigned v = (u(i) << 16) | (u(i + 1) << 8) | u(i + 2);
            out += alphabet[(v >> 18) & 63];
            out += alphabet[(v >> 12) & 63];
            out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
            out += i + 2 < bytes.size() ? alphabet[v & 63] : '=';
        }
        return out;
    };
    for (std::size_t n = 1; n <= 80; ++n) {
        std::vector<float> values(n);
        for (float& v : values) v = static_cast<float>(random() % 20001) / 1000.0f - 10.0f;
        const std::string text = encode(values);
        std::size_t count = 0;
        REQUIRE(detail::base64_float_count(text, count));
        REQUIRE(count == n);
        std::vector<float> fast(n), portable(n);
        REQUIRE(detail::decode_base64_floats(text, fast.data()));
        REQUIRE(detail::decode_base64_floats_portable(text, portable.data()));
        CHECK(fast == values);
        CHECK(portable == values);
        const std::size_t unpadded =
            text.find('=') == std::string::npos ? text.size() : text.find('=');
        for (std::size_t at = 0; at < unpadded; ++at) {
            for (char bad : {'*', '=', ':', '@', '[', '`', '{', '\x80', ' '}) {
                if (bad == '=' && at + 2 >= unpadded) continue;  // padding there, not a wrong byte
                std::string broken = text;
                broken[at] = bad;
                INFO(n << " floats, " << int(bad) << " at " << at);
                CHECK_FALSE(detail::decode_base64_floats(broken, fast.data()));
                CHECK_FALSE(detail::decode_base64_floats_portable(broken, portable.data()));
            }
        }
        // A NaN or an infinity at every place: in the eight-at-a-time blocks and in the rest.
        for (std::size_t at = 0; at < n; ++at) {
            for (float broken_value : {std::numeric_limits<float>::quiet_NaN(),
                                       -std::numeric_limits<float>::infinity()}) {
                std::vector<float> broken = values;
                broken[at] = broken_value;
                const std::string broken_text = encode(broken);
                INFO(n << " floats, " << broken_value << " at " << at);
                CHECK_FALSE(detail::decode_base64_floats(broken_text, fast.data()));
                CHECK_FALSE(detail::decode_base64_floats_portable(broken_text, portable.data()));
            }
        }
    }
}

TEST_CASE("a string with a control byte anywhere is not JSON") {
    for (std::size_t length = 0; length <= 40; ++length) {
        for (std::size_t at = 0; at < length; ++at) {
            for (char control : {'\x01', '\x1f', '\n'}) {
                std::string text(length, 'A');
                text[at] = control;
                const std::string quoted = "\"" + text + "\"";
                detail::JsonCursor cursor(quoted);
                std::string_view raw;
                bool escaped = false;
                INFO(length << " bytes, " << int(control) << " at " << at);
                CHECK_FALSE(cursor.string(raw, escaped));
            }
        }
        const std::string quoted = "\"" + std::string(length, '~') + "\"";
        detail::JsonCursor clean(quoted);
        std::string_view raw;
        bool escaped = false;
        CHECK(clean.string(raw, escaped));
        CHECK(raw.size() == length);
    }
}

TEST_CASE("a decimal becomes the float nearest it, not a double rounded again") {
    // Halfway between 1 and the next float, plus a little: the nearest float
    // is the upper one; parsed as a double first (1 + 2^-24 exactly) and then
    // rounded to even, it would be 1.
    auto e = parse_embedding_response(
        Provider::gemini,
        R"({"embeddings":[{"values":[1.00000005960464477539062500000001, 0.1, -0, 1e-50, 3.4028234e38, 1E+2]}]})",
        1);
    REQUIRE(e);
    CHECK(e->values[0] == std::nextafter(1.0f, 2.0f));
    CHECK(e->values[1] == 0.1f);
    CHECK(e->values[2] == 0.0f);
    CHECK(std::signbit(e->values[2]));
    CHECK(e->values[3] == 0.0f);  // too small for a float: its nearest, never an error
    CHECK(e->values[4] == 3.4028234e38f);
    CHECK(e->values[5] == 100.0f);
}

namespace {

/// One JSON number token through the one-pass reader, which must read it whole.
float read(const std::string& text) {
    float value = -1;
    const char* end =
        nous::llm::detail::parse_json_float(text.data(), text.data() + text.size(), value);
    REQUIRE(end == text.data() + text.size());
    return value;
}

}  // namespace

TEST_CASE("the one-pass number reader agrees with std::from_chars on every float it reads") {
    // Its double fast path must give the nearest float, as from_chars does,
    // including where the double lands exactly halfway between two floats.
    CHECK(read("16777217") == 16777216.0f);            // halfway, exactly: to even
    CHECK(read("16777217.000000001") == 16777218.0f);  // just above halfway
    CHECK(read("16777216.999999999") == 16777216.0f);
    CHECK(read("-0.0") == 0.0f);
    std::mt19937_64 random(0x5eed);
    char text[64];
    for (int i = 0; i < 200000; ++i) {
        // Values of every scale embeddings and other JSON carry, at 1 to 17 digits.
        const double magnitude = std::pow(10.0, static_cast<int>(random() % 40) - 25);
        const double value =
            (static_cast<double>(random() >> 11) / 9007199254740992.0 - 0.5) * magnitude;
        const int precision = 1 + static_cast<int>(random() % 17);
        const int n = std::snprintf(text, sizeof text, i % 2 ? "%.*g" : "%.*e", precision, value);
        const std::string token(text, static_cast<std::size_t>(n));  // e-05: JSON takes it
        float want = 0;
        auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), want);
        if (ec != std::errc()) continue;  // out of a float's range: the slow path's own test above
        INFO(token);
        REQUIRE(read(token) == want);
    }
}

TEST_CASE("the request bodies: base64 by default, floats when asked, dimensions, Gemini's shape") {
    MockServer server;
    std::mutex mutex;
    std::vector<MockRequest> seen;
    server.set_handler([&](const MockRequest& request, MockResponse&) {
        std::lock_guard lock(mutex);
        seen.push_back(request);
        return false;  // the mock answers
    });
    server.start();
    auto openai = request_to(server, Provider::openai, 2, 16);
    REQUIRE(embed(openai));
    openai.float_encoding = true;
    openai.dimensions.reset();
    auto floats = embed(openai);
    REQUIRE(floats);
    CHECK(floats->dimensions == 1536);  // the mock's default: the width comes from the answer
    auto gemini = request_to(server, Provider::gemini, 2, 16);
    REQUIRE(embed(gemini));
    REQUIRE(seen.size() == 3);
    auto body = [&](std::size_t i) {
        rapidjson::Document d;
        d.Parse(seen[i].body.c_str());
        REQUIRE(d.IsObject());
        return d;
    };
    auto first = body(0);
    CHECK(seen[0].target == "/v1/embeddings");
    CHECK(*seen[0].header("authorization") == "Bearer sk-test");
    CHECK(std::string(first["encoding_format"].GetString()) == "base64");
    CHECK(first["dimensions"].GetInt() == 16);
    CHECK(first["input"].Size() == 2);
    CHECK(std::string(first["input"][1].GetString()) == "text number 1");
    auto second = body(1);
    CHECK(std::string(second["encoding_format"].GetString()) == "float");
    CHECK_FALSE(second.HasMember("dimensions"));
    auto third = body(2);
    CHECK(seen[2].target == "/v1beta/models/text-embedding-mock:batchEmbedContents");
    CHECK(*seen[2].header("x-goog-api-key") == "sk-test");
    CHECK(third["requests"].Size() == 2);
    CHECK(std::string(third["requests"][0]["model"].GetString()) == "models/text-embedding-mock");
    CHECK(std::string(third["requests"][1]["content"]["parts"][0]["text"].GetString()) ==
          "text number 1");
    CHECK(third["requests"][0]["outputDimensionality"].GetInt() == 16);
    server.stop();
}

TEST_CASE("bad requests are refused before any connection") {
    MockServer server;
    server.start();
    auto check_refused = [&](EmbedRequest r, const std::string& words) {
        auto e = embed(r);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(e.error().message, Catch::Contains(words));
    };
    auto r = request_to(server, Provider::openai, 3);
    auto anthropic = r;
    anthropic.provider = Provider::anthropic;
    check_refused(anthropic, "anthropic has no embeddings API");
    auto empty = r;
    empty.inputs[1].clear();
    check_refused(empty, "input 1 is empty");
    auto none = r;
    none.inputs.clear();
    check_refused(none, "at least one input");
    auto no_model = r;
    no_model.model.clear();
    check_refused(no_model, "model");
    auto zero_dims = r;
    zero_dims.dimensions = 0;
    check_refused(zero_dims, "dimensions");
    auto zero_batch = r;
    zero_batch.batch_size = 0;
    check_refused(zero_batch, "batch_size");
    auto zero_concurrency = r;
    zero_concurrency.concurrency = 0;
    check_refused(zero_concurrency, "concurrency");
    auto bad_header = r;
    bad_header.headers = {{"x-bad", "a\r\nb"}};
    CHECK_FALSE(embed(bad_header));
    // What a provider answers with a 400: Gemini's batchEmbedContents takes
    // 100 requests at most, Azure (OpenAI's models) 2048 inputs, and OpenAI's
    // older model no dimensions. The openai format leaves its batch to the
    // server: vLLM and Ollama take more than OpenAI.
    auto gemini_batch = request_to(server, Provider::gemini, 3);
    gemini_batch.batch_size = 101;
    check_refused(gemini_batch, "batch_size 101 is over gemini's 100 inputs a request");
    auto azure_batch = request_to(server, Provider::azure, 3);
    azure_batch.base_url = server.base_url() + "/openai/v1";
    azure_batch.batch_size = 2049;
    check_refused(azure_batch, "batch_size 2049 is over azure's 2048 inputs a request");
    auto ada = r;
    ada.model = "text-embedding-ada-002";
    check_refused(ada, "dimensions is not taken by text-embedding-ada-002");
    CHECK(server.requests_served() == 0);
    ada.dimensions.reset();
    CHECK(embed(ada));
    auto wide = r;
    wide.batch_size = 4096;  // one request of 3 inputs: the server's limit is not reached
    CHECK(embed(wide));
    gemini_batch.batch_size = 100;
    CHECK(embed(gemini_batch));
    azure_batch.batch_size = 2048;
    CHECK(embed(azure_batch));
    server.stop();
}

TEST_CASE("the mock refuses dimensions for text-embedding-ada-002, as OpenAI does") {
    MockServer server;
    server.start();
    nous::http::Options options;
    options.max_retries = 0;
    const std::string url = server.base_url() + "/v1/embeddings";
    auto refused = nous::http::post(
        url, R"({"model":"text-embedding-ada-002","input":"a","dimensions":256})", {}, options);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().status == 400);
    CHECK(
        refused.error().body ==
        R"({"error":{"message":"This model does not support specifying dimensions.","type":"invalid_request_error","param":null,"code":null}})");
    CHECK(nous::http::post(url, R"({"model":"text-embedding-ada-002","input":"a"})", {}, options));
    CHECK(nous::http::post(
        url, R"({"model":"text-embedding-3-small","input":"a","dimensions":256})", {}, options));
}

TEST_CASE("5000 inputs in batches of 2048: three requests, rows in order, usage summed") {
    MockServer server;
    std::mutex mutex;
    std::vector<std::size_t> batch_sizes;
    server.set_handler([&](const MockRequest& request, MockResponse&) {
        rapidjson::Document d;
        d.Parse(request.body.c_str());
        std::lock_guard lock(mutex);
        batch_sizes.push_back(d["input"].Size());
        return false;
    });
    server.start();
    auto r = request_to(server, Provider::openai, 5000);
    r.batch_size = 2048;
    auto e = embed(r);
    REQUIRE(e);
    require_mock_rows(e.value(), r);
    std::sort(batch_sizes.begin(), batch_sizes.end());
    CHECK(batch_sizes == std::vector<std::size_t>{904, 2048, 2048});
    REQUIRE(e->batches.size() == 3);
    CHECK(e->batches[0].first == 0);
    CHECK(e->batches[1].first == 2048);
    CHECK(e->batches[2].first == 4096);
    CHECK(e->batches[2].count == 904);
    std::int64_t tokens = 0;
    for (const auto& b : e->batches) {
        CHECK_FALSE(b.request_id.empty());
        REQUIRE(b.input_tokens);
        tokens += *b.input_tokens;
    }
    REQUIRE(e->usage);
    CHECK(e->usage->input_tokens == tokens);
    CHECK(tokens >= 5000);
    CHECK(e->rate_limit);
    server.stop();
}

TEST_CASE("the default batches: 2048 for OpenAI, 100 for Gemini, and OpenAI's token budget") {
    MockServer server;
    server.start();
    auto gemini = request_to(server, Provider::gemini, 250);
    auto g = embed(gemini);
    REQUIRE(g);
    require_mock_rows(g.value(), gemini);
    REQUIRE(g->batches.size() == 3);
    CHECK(g->batches[2].count == 50);
    CHECK_FALSE(g->usage);  // Gemini reports none
    // 10 inputs of ~66,667 estimated tokens each: four fit under 300,000.
    auto big = request_to(server, Provider::openai, 10, 4);
    for (std::size_t i = 0; i < big.inputs.size(); ++i)
        big.inputs[i] = std::string(200'000, static_cast<char>('a' + i));
    auto b = embed(big);
    REQUIRE(b);
    require_mock_rows(b.value(), big);
    REQUIRE(b->batches.size() == 3);
    CHECK(b->batches[0].count == 4);
    CHECK(b->batches[1].count == 4);
    CHECK(b->batches[2].count == 2);
    server.stop();
}

TEST_CASE("up to `concurrency` requests in flight, never more") {
    MockServer server;
    std::mutex mutex;
    std::condition_variable changed;
    int in_flight = 0, most = 0;
    bool released = false;
    server.set_handler([&](const MockRequest&, MockResponse&) {
        std::unique_lock lock(mutex);
        most = std::max(most, ++in_flight);
        changed.notify_all();
        // The first requests wait until four are in flight at once: embed()
        // must have them all out, or this test fails by its timeout.
        changed.wait_for(lock, std::chrono::seconds(20),
                         [&] { return released || in_flight == 4; });
        released = true;
        changed.notify_all();
        --in_flight;
        return false;
    });
    server.start();
    auto r = request_to(server, Provider::openai, 80);
    r.batch_size = 10;
    r.concurrency = 4;
    auto e = embed(r);
    REQUIRE(e);
    require_mock_rows(e.value(), r);
    CHECK(most == 4);
    server.stop();
}

TEST_CASE(
    "a failed batch is retried by the retry policy, and one that keeps failing names its inputs") {
    MockServer server;
    std::mutex mutex;
    int failures_left = 1;
    bool always = false;
    server.set_handler([&](const MockRequest& request, MockResponse& response) {
        std::lock_guard lock(mutex);
        if (request.body.find("\"text number 30\"") == std::string::npos) return false;
        if (!always && failures_left == 0) return false;
        --failures_left;
        response.status = 500;
        response.body = R"({"error":{"message":"boom","type":"server_error"}})";
        return true;
    });
    server.start();
    auto r = request_to(server, Provider::openai, 50);
    r.batch_size = 20;
    nous::http::Options options;
    options.max_retries = 1;
    options.test_hooks = &kNoSleep;
    auto e = embed(r, options);
    REQUIRE(e);
    require_mock_rows(e.value(), r);
    CHECK(server.requests_served() == 4);  // three batches, one of them twice

    always = true;
    auto failed = embed(r, options);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == ErrorCode::http_status);
    CHECK(failed.error().status == 500);
    CHECK_THAT(failed.error().message, Catch::StartsWith("inputs 20-39: HTTP 500: boom"));
    server.stop();
}

TEST_CASE("a compatible server that ignores base64 and shuffles its rows is read all the same") {
    MockServer server;
    server.set_handler([&](const MockRequest& request, MockResponse& response) {
        // Floats in reverse order, whatever encoding was asked.
        rapidjson::Document d;
        d.Parse(request.body.c_str());
        const auto& input = d["input"];
        std::string body = R"({"data":[)";
        for (rapidjson::SizeType i = input.Size(); i-- > 0;) {
            body += R"({"object":"embedding","embedding":[)";
            const auto v = mock_vector(input[i].GetString(), 8);
            for (std::size_t j = 0; j < v.size(); ++j)
                body += (j ? "," : "") + std::to_string(v[j]);
            body += R"(],"index":)" + std::to_string(i) + "}" + (i ? "," : "");
        }
        response.body = body + "]}";
        return true;
    });
    server.start();
    auto r = request_to(server, Provider::openai, 7);
    auto e = embed(r);
    REQUIRE(e);
    REQUIRE(e->dimensions == 8);
    for (std::size_t i = 0; i < 7; ++i) {
        const auto want = mock_vector(r.inputs[i], 8);
        for (std::size_t j = 0; j < 8; ++j) CHECK(e->row(i)[j] == Approx(want[j]).margin(1e-6));
    }
    CHECK_FALSE(e->usage);
    server.stop();
}

TEST_CASE("the mock's faults reach embed() as its errors, the range named") {
    MockServer server;
    server.start();
    auto r = request_to(server, Provider::openai, 3);
    nous::http::Options no_retries;
    no_retries.max_retries = 0;
    const std::pair<const char*, ErrorCode> faults[] = {{"rate_limit", ErrorCode::http_status},
                                                        {"quota", ErrorCode::http_status},
                                                        {"server_error", ErrorCode::http_status},
                                                        {"truncate", ErrorCode::truncated}};
    for (const auto& [fault, code] : faults) {
        INFO(fault);
        auto failing = r;
        failing.headers = {{"x-mock-fault", fault}};
        auto e = embed(failing, no_retries);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == code);
        CHECK_THAT(e.error().message, Catch::StartsWith("inputs 0-2: "));
    }
    auto quota = r;
    quota.headers = {{"x-mock-fault", "quota"}};
    CHECK(embed(quota, no_retries).error().quota_exhausted);
    server.stop();
}

TEST_CASE("a float below a double's range (1e-400) reads as its nearest float, 0") {
    CHECK(read("1e-400") == 0.0f);
    CHECK(read("-1e-400") == 0.0f);
    CHECK(std::signbit(read("-1e-400")));
    CHECK(read("123456e-99999999999999") == 0.0f);
    CHECK(read("0." + std::string(500, '0') + "1") == 0.0f);
    // Past a double's range the other way has no float: refused, as before.
    for (const std::string& over :
         {std::string("1e400"), "1" + std::string(500, '0'), std::string("0.001e99999")}) {
        float value = 0;
        CHECK(nous::llm::detail::parse_json_float(over.data(), over.data() + over.size(), value) ==
              nullptr);
    }
    auto e = parse_embedding_response(Provider::gemini,
                                      R"({"embeddings":[{"values":[1e-400, 0.5, -2e-500]}]})", 1);
    REQUIRE(e);
    CHECK(e->values[0] == 0.0f);
    CHECK(e->values[1] == 0.5f);
    CHECK(e->values[2] == 0.0f);
}

TEST_CASE(
    "the token estimate of a batch never undercounts CJK text: more requests, each in budget") {
    MockServer server;
    server.start();
    // 2048 inputs of 140 CJK characters (420 bytes): bytes / 3 made them
    // 288,768 tokens, one request, while a tokenizer makes 1 to 3 tokens of
    // each character (up to 860,160). A byte past ASCII counts a token.
    auto cjk = request_to(server, Provider::openai, 2048, 8);
    std::string text;
    for (int i = 0; i < 140; ++i) text += "\xe6\xbc\xa2";  // 漢
    for (std::size_t i = 0; i < cjk.inputs.size(); ++i) cjk.inputs[i] = text + std::to_string(i);
    auto e = embed(cjk);
    REQUIRE(e);
    require_mock_rows(e.value(), cjk);
    CHECK(e->batches.size() >= 3);
    for (const auto& batch : e->batches)
        CHECK(batch.count * 420 <= 300'000);  // its CJK bytes alone
    server.stop();
}

TEST_CASE("embed() ignores a chat's content deadlines: its stream hands out no event") {
    // An answer that takes 50 ms: a 1 ms first-event deadline would end a
    // stream whose events never come, were it applied to embeddings.
    MockServer server;
    server.set_handler([](const MockRequest&, MockResponse& res) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        res.headers = {{"Content-Type", "application/json"}};
        res.body =
            R"({"data":[{"index":0,"embedding":[0.5,-0.25,1]}],"usage":{"prompt_tokens":1}})";
        return true;
    });
    server.start();
    EmbedRequest r = request_to(server, Provider::openai, 1);
    r.dimensions.reset();
    nous::http::Options options;
    options.first_event_timeout = nous::http::Milliseconds(1);
    options.event_idle_timeout = nous::http::Milliseconds(1);
    auto e = embed(r, options);
    INFO((e ? std::string() : e.error().message));
    REQUIRE(e);
    CHECK(e->values == std::vector<float>{0.5f, -0.25f, 1.0f});
}
