// nouscli chat --deployments end to end (docs/design/nouscli.md): the
// deployment that answered in --json, each attempt under -v, the listing
// when every deployment failed with the last failure's exit code, and the
// refusals before any connection.

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_run.hpp"
#include "nous/http/json.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;
using namespace nous::test;

namespace {

MockServerOptions with_fault(const std::string& fault) {
    MockServerOptions o;
    o.fault = fault;
    return o;
}

/// A router file of (name, base URL) deployments, in order, the first one
/// weighted and the others fallbacks.
std::string router_file(const std::vector<std::pair<std::string, std::string>>& deployments,
                        const std::string& extra = "") {
    static int counter = 0;
    const std::string path = "/tmp/nous-router-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++) + ".json";
    std::string json = R"({"strategy":"weighted",)" + extra + R"("deployments":[)";
    for (std::size_t i = 0; i < deployments.size(); ++i)
        json += std::string(i ? "," : "") + R"({"name":")" + deployments[i].first +
                R"(","provider":"openai","base_url":")" + deployments[i].second +
                R"(/v1","model":"mock-1","api_key_env":"ROUTER_TEST_KEY","weight":)" +
                (i == 0 ? "1" : "0") + "}";
    std::ofstream(path) << json << "]}";
    return path;
}

}  // namespace

TEST_CASE("nouscli chat --deployments: the answer, the deployment in --json, attempts under -v") {
    ::setenv("ROUTER_TEST_KEY", "sk-router", 1);
    MockServer failing(with_fault("overloaded")), healthy;
    failing.start();
    healthy.start();
    const std::string file =
        router_file({{"east", failing.base_url()}, {"west", healthy.base_url()}});
    auto r = nouscli({"chat", "hi", "--deployments", file, "--json", "-v"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    auto doc = parse_json(r.out);
    REQUIRE(doc);
    CHECK(std::string((*doc.value())["deployment"].GetString()) == "west");
    CHECK(r.err.find("* deployment east: HTTP 503") != std::string::npos);
    CHECK(r.err.find("* deployment west: answered") != std::string::npos);
    auto text = nouscli({"chat", "hi", "--deployments", file});
    CHECK(text.code == 0);
    CHECK(text.out.find("Hello from the nous-http mock server.") == 0);
    std::remove(file.c_str());
}

TEST_CASE(
    "nouscli chat --deployments: every deployment failed, each named, the last one's exit code") {
    ::setenv("ROUTER_TEST_KEY", "sk-router", 1);
    MockServer overloaded(with_fault("overloaded"));
    overloaded.start();
    const std::string file =
        router_file({{"east", overloaded.base_url()}, {"west", "http://127.0.0.1:1"}});
    auto r = nouscli({"chat", "hi", "--deployments", file});
    CHECK(r.code == 3);  // the last failure: connect_failed
    CHECK(r.err.find("east: HTTP 503") != std::string::npos);
    CHECK(r.err.find("west: connect_failed") != std::string::npos);
    const std::string reversed =
        router_file({{"west", "http://127.0.0.1:1"}, {"east", overloaded.base_url()}});
    CHECK(nouscli({"chat", "hi", "--deployments", reversed}).code == 5);  // the last: HTTP 503
    std::remove(file.c_str());
    std::remove(reversed.c_str());
}

TEST_CASE("nouscli chat --deployments: refused before any connection") {
    MockServer healthy;
    healthy.start();
    ::setenv("ROUTER_TEST_KEY", "sk-router", 1);
    const std::string file = router_file({{"east", healthy.base_url()}});
    CHECK(nouscli({"chat", "hi", "--deployments", file, "--model", "x"}).code == 2);
    CHECK(nouscli({"chat", "hi", "--deployments", file, "--retry", "1"}).code == 2);
    CHECK(nouscli({"chat", "hi", "--deployments", "/nonexistent.json"}).code == 2);
    const std::string bad =
        router_file({{"east", healthy.base_url()}}, R"("queue_timeout_ms":-5,)");
    CHECK(nouscli({"chat", "hi", "--deployments", bad}).code == 2);
    ::unsetenv("ROUTER_TEST_KEY");
    auto unset = nouscli({"chat", "hi", "--deployments", file});
    CHECK(unset.code == 2);
    CHECK(unset.err.find("deployment 'east': ROUTER_TEST_KEY is not set") != std::string::npos);
    CHECK(healthy.requests_served() == 0);
    std::remove(file.c_str());
    std::remove(bad.c_str());
}

TEST_CASE(
    "nouscli chat --metrics-out: the Prometheus text after the call, the deployment labelled") {
    ::setenv("ROUTER_TEST_KEY", "sk-router", 1);
    MockServer healthy;
    healthy.start();
    const std::string file = router_file({{"east", healthy.base_url()}});
    const std::string metrics = "/tmp/nous-metrics-" + std::to_string(::getpid()) + ".txt";
    auto r = nouscli({"chat", "hi", "--deployments", file, "--metrics-out", metrics});
    REQUIRE(r.code == 0);
    const std::string text = slurp(metrics);
    CHECK(text.find("# TYPE gen_ai_client_operation_duration_seconds histogram") !=
          std::string::npos);
    CHECK(text.find("gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name=\"chat\","
                    "gen_ai_provider_name=\"openai\",gen_ai_request_model=\"mock-1\","
                    "deployment=\"east\"} 1") != std::string::npos);
    CHECK(text.find("gen_ai_token_type=\"output\"") != std::string::npos);
    // A direct call, failed: its duration with its error type, no tokens.
    ::setenv("OPENAI_API_KEY", "sk-test", 1);
    auto failed = nouscli({"chat", "hi", "--model", "m", "--base-url", healthy.base_url() + "/v1",
                           "-H", "x-mock-fault: server_error", "--metrics-out", metrics});
    CHECK(failed.code == 5);
    const std::string after = slurp(metrics);
    CHECK(after.find("error_type=\"500\"") != std::string::npos);
    CHECK(after.find("gen_ai_client_token_usage_count") == std::string::npos);
    std::remove(metrics.c_str());
    std::remove(file.c_str());
}

TEST_CASE(
    "nouscli chat --deployments: a shared state lost is one line without -v, its password never") {
    ::setenv("ROUTER_TEST_KEY", "sk-router", 1);
    MockServer healthy;
    healthy.start();
    const std::string password = "pw-n0t-to-print";
    // Nothing listens on port 1: the call runs on this process's own counts.
    const std::string file =
        router_file({{"east", healthy.base_url()}},
                    R"("shared_state":"redis://:)" + password + R"(@127.0.0.1:1/0",)");
    auto r = nouscli({"chat", "hi", "--deployments", file});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("router: shared state redis://:***@127.0.0.1:1/0 unreachable") !=
          std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // that line alone
    CHECK((r.out + r.err).find(password) == std::string::npos);
    // A URL it cannot read: a usage error that does not print the password either.
    const std::string bad =
        router_file({{"east", healthy.base_url()}},
                    R"("shared_state":"redis://:)" + password + R"(@127.0.0.1:99999/0",)");
    auto refused = nouscli({"chat", "hi", "--deployments", bad});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("redis://:***@127.0.0.1:99999/0") != std::string::npos);
    CHECK(refused.err.find(password) == std::string::npos);
    std::remove(file.c_str());
    std::remove(bad.c_str());
}
