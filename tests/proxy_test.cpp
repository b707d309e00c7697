// Proxies from the environment: https through CONNECT, http in absolute form,
// no_proxy, and upper-case HTTP_PROXY ignored (httpoxy).

#include "core/proxy.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "nous/http/client.hpp"
#include "nous/mock/mock_server.hpp"
#include "proxy_server.hpp"
#include "test_helpers.hpp"
#include "tls_fixture.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("no_proxy matching: exact host, domain suffix, leading dot, port, wildcard") {
    using detail::no_proxy_matches;
    CHECK(no_proxy_matches("example.com", "example.com", 443));
    CHECK(no_proxy_matches("example.com", "api.example.com", 443));
    CHECK(no_proxy_matches(".example.com", "api.example.com", 443));
    CHECK_FALSE(no_proxy_matches("example.com", "notexample.com", 443));
    CHECK(no_proxy_matches("a.org, 127.0.0.1", "127.0.0.1", 80));
    CHECK(no_proxy_matches("internal:8080", "internal", 8080));
    CHECK_FALSE(no_proxy_matches("internal:8080", "internal", 9090));
    CHECK(no_proxy_matches("*", "anything", 1));
    CHECK_FALSE(no_proxy_matches("", "anything", 1));
}

TEST_CASE("https goes through the proxy with CONNECT, and the TLS host check still applies") {
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    ProxyServer proxy;
    ScopedEnv env;
    env.set("https_proxy", proxy.url());
    Options o;
    o.ca_file = pki.ca_cert;
    o.max_retries = 0;
    auto r = post("https://localhost:" + std::to_string(origin.port()) + "/v1/x", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == "tls-ok");
    CHECK(proxy.connects() == 1);
    CHECK(proxy.last_request_line() ==
          "CONNECT localhost:" + std::to_string(origin.port()) + " HTTP/1.1");
}

TEST_CASE("HTTPS_PROXY (upper case) works for https, with credentials from the proxy URL") {
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    ProxyServer proxy(detail::basic_auth("user:secret"));
    ScopedEnv env;
    env.set("HTTPS_PROXY", "http://user:secret@127.0.0.1:" + std::to_string(proxy.port()));
    Options o;
    o.ca_file = pki.ca_cert;
    o.max_retries = 0;
    auto r = post("https://localhost:" + std::to_string(origin.port()) + "/", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(proxy.connects() == 1);
}

TEST_CASE("plain http goes through http_proxy in absolute form, HTTP_PROXY is ignored") {
    MockServer origin;
    origin.start();
    ProxyServer proxy;
    std::string url = origin.base_url() + "/small";
    {
        ScopedEnv env;
        env.set("HTTP_PROXY", proxy.url());  // httpoxy: never honoured
        REQUIRE(post(url, "{}").ok());
        CHECK(proxy.forwarded() == 0);
    }
    {
        ScopedEnv env;
        env.set("http_proxy", proxy.url());
        auto r = post(url, "{}");
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
        CHECK(proxy.forwarded() == 1);
        CHECK(proxy.last_request_line() == "POST " + url + " HTTP/1.1");
    }
    {
        ScopedEnv env;
        env.set("http_proxy", proxy.url());
        env.set("no_proxy", "localhost,127.0.0.1");
        REQUIRE(post(url, "{}").ok());
        CHECK(proxy.forwarded() == 1);
    }
}

TEST_CASE("a proxy that refuses CONNECT is connect_failed with its status") {
    ProxyServer proxy(detail::basic_auth("need:auth"));
    ScopedEnv env;
    env.set("https_proxy", proxy.url());
    Options o;
    o.max_retries = 0;
    auto r = post("https://localhost:1/", "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::connect_failed);
    CHECK(r.error().status == 407);
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

TEST_CASE("proxy userinfo is base64'd without percent-decoding: p%40ss is the password p@ss") {
    CHECK(detail::basic_auth("user:p%40ss") == "Basic dXNlcjpwQHNz");
    CHECK(detail::basic_auth("a:b") == "Basic YTpi");
    CHECK(detail::basic_auth("ab:cd") == "Basic YWI6Y2Q=");
}
