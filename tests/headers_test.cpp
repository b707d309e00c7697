#include "core/headers.hpp"

#include <catch2/catch.hpp>

#include "nous/http/client.hpp"

using namespace nous::http;
using namespace nous::http::detail;

TEST_CASE("header helpers add nothing for an empty key") {
    Headers h;
    add_bearer_auth(h, "");
    add_api_key(h, "x-api-key", "");
    add_openai_organization(h, "");
    add_openai_project(h, "");
    CHECK(h.empty());
    add_bearer_auth(h, "sk-1");
    add_api_key(h, "x-api-key", "ak");
    add_openai_organization(h, "org-1");
    add_openai_project(h, "proj-1");
    REQUIRE(h.size() == 4);
    CHECK(h[0] == std::pair<std::string, std::string>{"authorization", "Bearer sk-1"});
    CHECK(h[1] == std::pair<std::string, std::string>{"x-api-key", "ak"});
    CHECK(h[2] == std::pair<std::string, std::string>{"openai-organization", "org-1"});
    CHECK(h[3] == std::pair<std::string, std::string>{"openai-project", "proj-1"});
}

TEST_CASE("validate_headers refuses CR, LF and NUL in names and values") {
    CHECK_FALSE(validate_headers({{"X-Ok", "fine value"}}).has_value());
    for (Headers bad : {Headers{{"X-A", "v\r\nInjected: 1"}}, Headers{{"X-A", "v\n"}},
                        Headers{{"X-A", std::string("v\0w", 3)}}, Headers{{"X-A\r\nB", "v"}},
                        Headers{{"", "v"}}, Headers{{"Bad Name", "v"}}}) {
        auto e = validate_headers(bad);
        REQUIRE(e.has_value());
        CHECK(e->code == ErrorCode::invalid_argument);
        // The message never echoes a header value.
        CHECK(e->message.find("Injected") == std::string::npos);
    }
}

TEST_CASE("secret headers are redacted, harmless ones are not") {
    for (const char* secret : {"Authorization", "proxy-authorization", "Cookie", "X-Api-Key",
                               "api-key", "x-goog-api-key"})
        CHECK(redacted_header_line(secret, "s3cr3t") == std::string(secret) + ": [REDACTED]");
    CHECK(redacted_header_line("X-Custom", "visible") == "X-Custom: visible");
    CHECK(header_names_for_log({{"Authorization", "Bearer x"}, {"X\r\n", "y"}}) ==
          "[Authorization: [REDACTED], X??: [REDACTED]]");
}

TEST_CASE("header names compare case-insensitively") {
    CHECK(header_name_equals("Content-Type", "content-type"));
    CHECK_FALSE(header_name_equals("Content-Type", "content-typ"));
    Response r;
    r.headers = {{"retry-after", "42"}};
    CHECK(r.header("Retry-After") == std::optional<std::string_view>("42"));
    CHECK_FALSE(r.header("x").has_value());
}
