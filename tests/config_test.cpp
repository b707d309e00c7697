#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "nous/http/log.hpp"

using namespace nous::http;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
    std::string path = "/tmp/nous-config-test-" + std::to_string(::getpid()) + "-" + name;
    std::ofstream(path) << text;
    return path;
}
}  // namespace

TEST_CASE("NOUS_HTTP_CONFIG supplies the app config, code wins over the file") {
    auto path = write_temp("ok.json",
                           R"({"backend":"file.backend","connect_timeout_ms":1234,"max_retries":5,
                                          "pool_max_per_origin":7,"read_timeout_ms":999})");
    ::setenv("NOUS_HTTP_CONFIG", path.c_str(), 1);
    Config file = current_config();
    CHECK(file.backend == std::optional<std::string>("file.backend"));
    CHECK(file.connect_timeout == Milliseconds(1234));
    CHECK(file.read_timeout == Milliseconds(999));
    CHECK(file.max_retries == 5);
    CHECK(file.pool_max_per_origin == std::size_t(7));
    Config code;
    code.backend = "code.backend";
    configure(code);
    Config merged = current_config();
    CHECK(merged.backend == std::optional<std::string>("code.backend"));
    CHECK(merged.connect_timeout == Milliseconds(1234));
    configure({});
    ::unsetenv("NOUS_HTTP_CONFIG");
    CHECK_FALSE(current_config().backend.has_value());
}

TEST_CASE("a malformed or missing config file is logged once and ignored") {
    std::mutex mutex;
    std::vector<std::string> lines;
    set_log_sink([&](LogLevel level, std::string_view m) {
        std::lock_guard lock(mutex);
        if (level == LogLevel::error) lines.emplace_back(m);
    });
    auto bad = write_temp("bad.json", "{not json");
    ::setenv("NOUS_HTTP_CONFIG", bad.c_str(), 1);
    CHECK_FALSE(current_config().backend.has_value());
    CHECK_FALSE(current_config().backend.has_value());
    ::setenv("NOUS_HTTP_CONFIG", "/nonexistent/nous.json", 1);
    CHECK_FALSE(current_config().backend.has_value());
    CHECK(resolve_backend_name({}).value() == "pooled");
    ::unsetenv("NOUS_HTTP_CONFIG");
    set_log_sink(nullptr);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("not a JSON object") != std::string::npos);
    CHECK(lines[1].find("cannot read") != std::string::npos);
}
