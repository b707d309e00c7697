// nouscli embed end to end against the mock: its three output formats (the
// .npy read back by numpy.load), --input from a file and stdin, -o, -v's
// line per request, and the usage errors (docs/design/nouscli.md).

#include <catch2/catch.hpp>
#include <cstring>

#include "cli_run.hpp"
#include "mock/embedding_replies.hpp"
#include "nous/http/json.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;
using namespace nous::test;

namespace {

struct Mock {
    MockServer server;
    Mock() {
        server.start();
        ::setenv("OPENAI_API_KEY", "sk-test", 1);
        ::setenv("GEMINI_API_KEY", "g-test", 1);
    }
    std::vector<std::string> args(std::vector<std::string> extra, bool gemini = false) const {
        std::vector<std::string> a = {"embed", "--model", "text-embedding-mock", "--base-url",
                                      server.base_url() + (gemini ? "/v1beta" : "/v1")};
        if (gemini) {
            a.push_back("--provider");
            a.push_back("gemini");
        }
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

std::vector<float> mock_vector(const std::string& text, std::size_t dims) {
    std::vector<float> v(dims);
    mock::mock_embedding(text, dims, v.data());
    return v;
}

/// The rows of raw little-endian float32 text.
std::vector<float> floats_of(const std::string& bytes) {
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

std::vector<float> expected(const std::vector<std::string>& texts, std::size_t dims) {
    std::vector<float> all;
    for (const auto& t : texts) {
        auto v = mock_vector(t, dims);
        all.insert(all.end(), v.begin(), v.end());
    }
    return all;
}

}  // namespace

TEST_CASE("nouscli embed jsonl: one line per input, each float exactly the mock's") {
    Mock mock;
    for (bool gemini : {false, true}) {
        for (const char* encoding : {"", "--float"}) {
            auto extra = std::vector<std::string>{"alpha", "beta", "--dimensions", "6"};
            if (*encoding) extra.push_back(encoding);
            auto r = nouscli(mock.args(extra, gemini));
            INFO(r.err);
            REQUIRE(r.code == 0);
            std::istringstream lines(r.out);
            std::string line;
            std::size_t i = 0;
            for (; std::getline(lines, line); ++i) {
                auto doc = parse_json(line);
                REQUIRE(doc);
                const auto& d = *doc.value();
                CHECK(d["index"].GetUint64() == i);
                const auto want = mock_vector(i == 0 ? "alpha" : "beta", 6);
                REQUIRE(d["embedding"].Size() == 6);
                // The shortest text that reads back as the same float32: exact.
                for (rapidjson::SizeType j = 0; j < 6; ++j)
                    CHECK(d["embedding"][j].GetFloat() == want[j]);
            }
            CHECK(i == 2);
        }
    }
}

TEST_CASE("nouscli embed f32 and npy: the same matrix, and numpy.load reads the .npy") {
    Mock mock;
    const std::vector<std::string> texts = {"one", "two", "three", "four", "five"};
    const std::string path = "/tmp/nouscli-embed-test-" + std::to_string(::getpid()) + ".npy";
    // --input from stdin after the TEXT arguments, in batches of 2 over 2 requests at once.
    auto f32 = nouscli(mock.args({"one", "two", "--input", "-", "--batch", "2", "--concurrency",
                                  "2", "--dimensions", "5", "--format", "f32"}),
                       "three\nfour\r\nfive\n");
    INFO(f32.err);
    REQUIRE(f32.code == 0);
    CHECK(floats_of(f32.out) == expected(texts, 5));

    auto npy = nouscli(mock.args({"one", "two", "three", "four", "five", "--dimensions", "5",
                                  "--format", "npy", "-o", path}));
    REQUIRE(npy.code == 0);
    CHECK(npy.out.empty());
    const std::string file = slurp(path);
    REQUIRE(file.size() > 10);
    CHECK(file.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header =
        10 + (static_cast<unsigned char>(file[8]) | static_cast<unsigned char>(file[9]) << 8);
    CHECK(header % 64 == 0);
    CHECK(file.find("'descr': '<f4', 'fortran_order': False, 'shape': (5, 5)") !=
          std::string::npos);
    CHECK(floats_of(file.substr(header)) == expected(texts, 5));
    // What a Python user does with it (Debian's python3 and python3-numpy: make deps).
    const std::string check =
        "/usr/bin/python3 -c \"import numpy as n; a = n.load('" + path +
        "'); assert a.shape == (5, 5) and a.dtype == n.float32; "
        "assert abs(float((a * a).sum(axis=1).min()) - 1) < 1e-5; print(repr(a[2, 0].item()))\"";
    FILE* p = ::popen(check.c_str(), "r");
    REQUIRE(p);
    char out[64] = {};
    const std::size_t got = std::fread(out, 1, sizeof out - 1, p);
    CHECK(::pclose(p) == 0);
    CHECK(std::stod(std::string(out, got)) == Approx(mock_vector("three", 5)[0]).epsilon(1e-7));
    std::remove(path.c_str());
}

TEST_CASE("nouscli embed -v: each request's range, request id and usage, on stderr") {
    Mock mock;
    auto r = nouscli(mock.args({"a", "b", "c", "--batch", "2", "--dimensions", "3", "-v"}));
    REQUIRE(r.code == 0);
    CHECK(r.err.find("* inputs 0-1: request id req_mock_") != std::string::npos);
    CHECK(r.err.find("* inputs 2-2: request id req_mock_") != std::string::npos);
    CHECK(r.err.find("input tokens") != std::string::npos);
}

TEST_CASE("nouscli embed usage errors exit 2 before any connection, and failures by their class") {
    Mock mock;
    CHECK(nouscli(mock.args({})).code == 2);  // no input at all
    CHECK(nouscli(mock.args({"--input", "-"}), "").code == 2);
    CHECK(nouscli({"embed", "x"}).code == 2);  // no --model
    auto anthropic = nouscli({"embed", "x", "--model", "m", "--provider", "anthropic"});
    CHECK(anthropic.code == 2);
    CHECK(anthropic.err.find("no embeddings API") != std::string::npos);
    CHECK(nouscli(mock.args({"x", "--format", "csv"})).code == 2);
    CHECK(nouscli(mock.args({"x", "--dimensions", "0"})).code == 2);
    CHECK(nouscli(mock.args({"x", "--batch", "-1"})).code == 2);
    CHECK(nouscli(mock.args({"x", "--concurrency", "0"})).code == 2);
    CHECK(nouscli(mock.args({"x", "--input", "/nonexistent/file"})).code == 2);
    auto empty_line = nouscli(mock.args({"--input", "-"}), "a\n\nb\n");
    CHECK(empty_line.code == 2);
    CHECK(empty_line.err.find("input 1 is empty") != std::string::npos);
    CHECK(mock.server.requests_served() == 0);
    auto server_error = nouscli(mock.args({"x", "-H", "x-mock-fault: server_error"}));
    CHECK(server_error.code == 5);
    CHECK(server_error.err.find("input 0: HTTP 500") != std::string::npos);
    CHECK(nouscli(mock.args({"x", "-H", "x-mock-fault: truncate"})).code == 3);
}
