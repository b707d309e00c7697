#include "core/url.hpp"

#include <catch2/catch.hpp>

using namespace nous::http;
using namespace nous::http::detail;

TEST_CASE("parse_url accepts http and https with defaults") {
    auto u = parse_url("https://api.openai.com/v1/chat/completions?x=1");
    REQUIRE(u.ok());
    CHECK(u->https);
    CHECK(u->host == "api.openai.com");
    CHECK(u->port == 443);
    CHECK(u->target == "/v1/chat/completions?x=1");
    CHECK(u->host_header() == "api.openai.com");

    auto p = parse_url("HTTP://Example.COM:8080");
    REQUIRE(p.ok());
    CHECK_FALSE(p->https);
    CHECK(p->host == "example.com");
    CHECK(p->port == 8080);
    CHECK(p->target == "/");
    CHECK(p->host_header() == "example.com:8080");
}

TEST_CASE("parse_url handles IPv6 literals and userinfo") {
    auto u = parse_url("http://[::1]:9000/x");
    REQUIRE(u.ok());
    CHECK(u->host == "::1");
    CHECK(u->host_is_ipv6);
    CHECK(u->host_header() == "[::1]:9000");
    auto p = parse_url("http://user:pa%40ss@proxy.local:3128");
    REQUIRE(p.ok());
    CHECK(p->userinfo == "user:pa%40ss");
    CHECK(p->host == "proxy.local");
}

TEST_CASE("parse_url refuses bad input with invalid_argument") {
    for (const char* bad :
         {"ftp://x/y", "example.com/x", "http://", "http:///path", "http://host:0/",
          "http://host:65536/", "http://host:12ab/", "http://host:/", "http://ho st/",
          "http://host/a\r\nX: y", "http://[::1/x", "http://exa$mple.com/"}) {
        INFO(bad);
        auto u = parse_url(bad);
        REQUIRE_FALSE(u.ok());
        CHECK(u.error().code == ErrorCode::invalid_argument);
    }
}

TEST_CASE("regression: a password read as a port is never quoted in the error") {
    // "alice:hunter2" before the first '/' reads as host:port.
    for (const char* url : {"https://alice:hunter2/x@host/v1", "http://u:s3cret/x@proxy:3128",
                            "hunter2://host/", "https://host:hunter2@/"}) {
        INFO(url);
        auto u = parse_url(url);
        REQUIRE_FALSE(u.ok());
        CHECK(u.error().message.find("hunter2") == std::string::npos);
        CHECK(u.error().message.find("s3cret") == std::string::npos);
        CHECK(url_for_log(url).find("hunter2") == std::string::npos);
        CHECK(url_for_log(url).find("s3cret") == std::string::npos);
    }
}

TEST_CASE("redact_url hides the values of credential query parameters, whatever their case") {
    for (const char* name : {"key", "api_key", "apikey", "api-key", "access_token", "token", "sig",
                             "signature", "password", "secret", "API_KEY", "Access_Token"}) {
        INFO(name);
        const std::string url = std::string("https://x/y?alt=sse&") + name + "=SECRET&n=1";
        CHECK(redact_url(url) == std::string("https://x/y?alt=sse&") + name + "=[REDACTED]&n=1");
    }
    CHECK(redact_url("https://x/y?tokens=5&keys=a") == "https://x/y?tokens=5&keys=a");
}

TEST_CASE("redact_url hides the key query parameter") {
    CHECK(redact_url("https://g.api/v1/m:generate?key=SECRET&alt=sse") ==
          "https://g.api/v1/m:generate?key=[REDACTED]&alt=sse");
    CHECK(redact_url("https://x/y?alt=sse&KEY=abc") == "https://x/y?alt=sse&KEY=[REDACTED]");
    CHECK(redact_url("https://x/y?monkey=1") == "https://x/y?monkey=1");
    CHECK(redact_url("https://x/y") == "https://x/y");
}

TEST_CASE("url_for_log drops the query and credentials") {
    CHECK(url_for_log("https://u:p@h.com/a?key=1#f") == "https://h.com/a");
    CHECK(url_for_log("http://h/a/b") == "http://h/a/b");
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

TEST_CASE(
    "verbose output printed user:pass@ of a URL: redact_url hides userinfo and a key parameter") {
    CHECK(redact_url("https://user:secret@api.example/v1?key=abc&x=1") ==
          "https://[REDACTED]@api.example/v1?key=[REDACTED]&x=1");
    CHECK(redact_url("https://api.example/v1") == "https://api.example/v1");
}
