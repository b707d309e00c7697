// The log never holds a header value or a URL query; bodies are cut at 500 bytes.

#include "nous/http/log.hpp"

#include <catch2/catch.hpp>
#include <mutex>

#include "nous/http/client.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;

namespace {
struct Capture {
    std::mutex mutex;
    std::string all;
    Capture() {
        set_log_level(LogLevel::debug);
        set_log_sink([this](LogLevel, std::string_view m) {
            std::lock_guard lock(mutex);
            all += std::string(m) + "\n";
        });
    }
    ~Capture() {
        set_log_sink(nullptr);
        set_log_level(LogLevel::warning);
    }
};
}  // namespace

TEST_CASE("an error response is logged with its body cut at 500 bytes, without secrets or query") {
    MockServer server;
    server.set_handler([](const MockRequest&, MockResponse& r) {
        r.status = 401;
        r.body = std::string(2000, 'e');
        return true;
    });
    server.start();
    Capture capture;
    Options o;
    o.max_retries = 0;
    auto r = post(server.base_url() + "/v1/x?key=QUERYSECRET", "{}",
                  {{"Authorization", "Bearer HEADERSECRET"}}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(capture.all.find("http_status") != std::string::npos);
    CHECK(capture.all.find(std::string(500, 'e')) != std::string::npos);
    CHECK(capture.all.find(std::string(501, 'e')) == std::string::npos);
    CHECK(capture.all.find("QUERYSECRET") == std::string::npos);
    CHECK(capture.all.find("HEADERSECRET") == std::string::npos);
}

TEST_CASE("a refused header is logged by name only") {
    Capture capture;
    auto r = post("http://127.0.0.1:1/x", "{}", {{"X-Api-Key", "sk-SECRETVALUE\r\nInjected: 1"}});
    REQUIRE_FALSE(r.ok());
    CHECK(capture.all.find("X-Api-Key: [REDACTED]") != std::string::npos);
    CHECK(capture.all.find("SECRETVALUE") == std::string::npos);
}

TEST_CASE("the level filters messages") {
    std::mutex mutex;
    int count = 0;
    set_log_sink([&](LogLevel, std::string_view) {
        std::lock_guard lock(mutex);
        ++count;
    });
    set_log_level(LogLevel::error);
    Options o;
    o.max_retries = 0;
    CHECK_FALSE(post("http://127.0.0.1:1/x", "{}", {}, o).ok());  // a warning: filtered
    set_log_level(LogLevel::warning);
    CHECK_FALSE(post("http://127.0.0.1:1/x", "{}", {}, o).ok());
    set_log_sink(nullptr);
    CHECK(count == 1);
}
