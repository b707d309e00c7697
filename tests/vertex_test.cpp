// Vertex AI: the URLs (global and regional, the project from the key file),
// Anthropic's Vertex body (no model, its anthropic_version, no version
// header), what is refused before a byte goes out, a service account's JWT
// exchanged at the mock's token endpoint (which verifies its RS256
// signature) for streamed and whole calls in both formats, a key the
// endpoint refuses, the token shared, and a 401 that renews it once.

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <rapidjson/pointer.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "chat_body.hpp"
#include "nous/llm/count_tokens.hpp"
#include "nous/llm/run_chat.hpp"
#include "nous/llm/telemetry.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockServer;

namespace {

std::string header(const Headers& headers, std::string_view name) {
    for (const auto& [n, v] : headers)
        if (nous::http::header_name_equals(n, name)) return v;
    return "<none>";
}

/// A new RSA key as PEM.
std::string rsa_pem() {
    EVP_PKEY* key = EVP_RSA_gen(2048);
    REQUIRE(key);
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    std::string pem(data, static_cast<std::size_t>(size));
    BIO_free(bio);
    EVP_PKEY_free(key);
    return pem;
}

std::string json_escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\n')
            out += "\\n";
        else if (c == '"' || c == '\\')
            out += std::string("\\") + c;
        else
            out += c;
    }
    return out;
}

/// A service account key file for `token_uri`, signed by `pem`.
std::string key_file(const std::string& name, const std::string& pem,
                     const std::string& token_uri) {
    const std::string path =
        std::filesystem::temp_directory_path() / ("nous-vertex-" + name + ".json");
    std::ofstream(path)
        << R"({"type":"service_account","project_id":"proj-from-file","private_key_id":"k1",)"
        << R"("private_key":")" << json_escaped(pem) << R"(",)"
        << R"("client_email":"sa@proj.iam.gserviceaccount.com","token_uri":")" << token_uri
        << R"("})";
    return path;
}

/// A mock that checks the JWTs signed by `pem`, and its key file (in
/// `file`): the key file must name the mock's token URL, so a free port is
/// found first.
std::unique_ptr<MockServer> checking_mock(const std::string& name, const std::string& pem,
                                          std::string& file) {
    MockServer probe;
    probe.start();
    const std::string url = probe.base_url();
    probe.stop();
    file = key_file(name, pem, url + "/token");
    nous::http::MockServerOptions o;
    o.google_key_file = file;
    o.port = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    auto server = std::make_unique<MockServer>(o);
    server->start();
    return server;
}

struct GoogleEnv {
    explicit GoogleEnv(const std::string& file) {
        for (const char* name :
             {"GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"})
            ::unsetenv(name);
        ::setenv("GOOGLE_APPLICATION_CREDENTIALS", file.c_str(), 1);
        ::setenv("HOME", "/nonexistent", 1);
    }
    ~GoogleEnv() { ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS"); }
};

ChatRequest vertex(Provider provider, std::string base, std::string model) {
    ChatRequest r;
    r.provider = provider;
    r.base_url = std::move(base);
    r.model = std::move(model);
    r.messages.push_back(ChatMessage::user("hello"));
    return r;
}

}  // namespace

TEST_CASE(
    "vertex: URLs, the project from the key file, Anthropic's Vertex body, a caller's token") {
    GoogleEnv env(key_file("urls", rsa_pem(), "http://127.0.0.1:1/token"));
    ChatRequest gemini = vertex(Provider::vertex, "", "gemini-2.5-flash");
    gemini.api_key = "ya29.caller";  // a token of the caller's: no token endpoint involved
    auto g = build_chat_call(gemini);
    REQUIRE(g);
    CHECK(
        g->url ==
        "https://aiplatform.googleapis.com/v1/projects/proj-from-file/locations/global/publishers/"
        "google/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    CHECK(header(g->headers, "authorization") == "Bearer ya29.caller");
    CHECK(header(g->headers, "x-goog-api-key") == "<none>");
    ChatRequest claude = vertex(Provider::vertex_anthropic, "", "claude-sonnet-4@20250514");
    claude.api_key = "ya29.caller";
    claude.project = "p2";
    claude.location = "us-east5";
    claude.stream = false;
    auto c = build_chat_call(claude);
    REQUIRE(c);
    CHECK(c->url ==
          "https://us-east5-aiplatform.googleapis.com/v1/projects/p2/locations/us-east5/publishers/"
          "anthropic/models/claude-sonnet-4@20250514:rawPredict");
    CHECK(header(c->headers, "anthropic-version") == "<none>");
    auto body = nous::http::parse_json(c->body);
    REQUIRE(body);
    CHECK_FALSE(body.value()->HasMember("model"));
    CHECK(std::string((*body.value())["anthropic_version"].GetString()) == "vertex-2023-10-16");
    // Each model family keeps its own range of temperatures: Claude's 0 to 1, Gemini's 0 to 2.
    claude.temperature = 1.5;
    auto hot_claude = build_chat_call(claude);
    REQUIRE_FALSE(hot_claude);
    CHECK(hot_claude.error().message ==
          "temperature 1.5 is not taken by vertex-anthropic: it takes 0 to 1 (refused before "
          "sending)");
    gemini.temperature = 1.5;
    CHECK(build_chat_call(gemini));
    gemini.temperature = 2.5;
    CHECK_FALSE(build_chat_call(gemini));
    CHECK(otel_provider_name(Provider::vertex) == "gcp.vertex_ai");
    CHECK(provider_from_name("vertex-anthropic") == Provider::vertex_anthropic);
}

TEST_CASE("vertex: no project, no credentials: refused naming the variables") {
    GoogleEnv env("/nonexistent/key.json");
    ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    ChatRequest r = vertex(Provider::vertex, "", "g");
    auto no_project = build_chat_call(r);
    REQUIRE_FALSE(no_project);
    CHECK_THAT(no_project.error().message, Catch::Contains("GOOGLE_CLOUD_PROJECT"));
    r.project = "p";
    auto no_credentials = build_chat_call(r);
    REQUIRE_FALSE(no_credentials);
    CHECK(no_credentials.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(no_credentials.error().message, Catch::Contains("GOOGLE_APPLICATION_CREDENTIALS"));
}

TEST_CASE("vertex against the mock: a service account's JWT for a token, both formats, both ways") {
    const std::string pem = rsa_pem();
    // The mock verifies assertions with the same key file the client signs with.
    MockServer server;
    server.start();
    const std::string file = key_file("calls", pem, server.base_url() + "/token");
    server.stop();
    nous::http::MockServerOptions o;
    o.google_key_file = file;
    o.port = static_cast<std::uint16_t>(
        std::stoi(server.base_url().substr(server.base_url().rfind(':') + 1)));
    MockServer checked(o);
    checked.start();
    GoogleEnv env(file);
    for (Provider p : {Provider::vertex, Provider::vertex_anthropic}) {
        for (bool stream : {true, false}) {
            INFO(to_string(p) << (stream ? " streamed" : " whole"));
            ChatRequest r = vertex(p, checked.base_url() + "/v1", "a-model");
            r.stream = stream;
            auto result = run_chat(r);
            REQUIRE(result);
            CHECK_FALSE(result->text.empty());
            CHECK(checked.last_request().header("authorization")->starts_with("Bearer ya29.mock-"));
        }
    }
    // One token for the process: four calls, one exchange.
    CHECK(checked.last_request().header("authorization") ==
          std::optional<std::string>("Bearer ya29.mock-1"));
}

TEST_CASE("vertex: a key the endpoint refuses is its words, and a 401 renews the token once") {
    const std::string pem = rsa_pem();
    MockServer first;  // issues any token, to anyone
    first.start();
    std::string file;
    const auto checking = checking_mock("renew", pem, file);
    MockServer& checked = *checking;
    const std::string checked_url = checked.base_url();
    GoogleEnv env(file);
    // A token from `first` is cached; `checked` never issued it: its 401
    // drops it, a new one comes from `checked`'s endpoint, and the call succeeds.
    key_file("renew", pem, first.base_url() + "/token");
    ChatRequest r = vertex(Provider::vertex, checked.base_url() + "/v1", "g");
    r.stream = false;
    REQUIRE(build_chat_call(r));  // caches a token from `first`
    key_file("renew", pem, checked_url + "/token");
    auto renewed = run_chat(r);
    INFO((renewed ? std::string() : renewed.error().message));
    REQUIRE(renewed);
    CHECK(renewed->text.size() > 0);

    // Another key, the same client_email: the endpoint's words, never the key or the assertion.
    const std::string wrong = key_file("wrong", rsa_pem(), checked.base_url() + "/token");
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", wrong.c_str(), 1);
    auto refused = run_chat(r);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("invalid_grant: Invalid JWT Signature."));
    CHECK_THAT(refused.error().message, !Catch::Contains("PRIVATE KEY"));
    CHECK(refused.error().body.empty());
}

TEST_CASE("vertex: eight calls at once share one token exchange") {
    const std::string pem = rsa_pem();
    std::string file;
    const auto checking = checking_mock("shared", pem, file);
    MockServer& checked = *checking;
    GoogleEnv env(file);
    std::vector<std::thread> threads;
    std::atomic<int> answered{0};
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&] {
            ChatRequest r = vertex(Provider::vertex, checked.base_url() + "/v1", "g");
            r.stream = false;
            if (run_chat(r)) ++answered;
        });
    for (auto& t : threads) t.join();
    CHECK(answered == 8);
    // Eight calls and one token request: the one thread that refreshed got
    // ya29.mock-1, and the others waited for it.
    CHECK(checked.requests_served() == 9);
    CHECK(checked.last_request().header("authorization") ==
          std::optional<std::string>("Bearer ya29.mock-1"));
}

TEST_CASE("the mock serves Vertex's counters: Gemini's :countTokens and Anthropic's count-tokens") {
    MockServer server;
    server.start();
    const nous::http::Headers bearer = {{"Authorization", "Bearer ya29.any"},
                                        {"Content-Type", "application/json"}};
    auto gemini = nous::http::post(
        server.base_url() +
            "/v1/projects/p/locations/global/publishers/google/models/g:countTokens",
        R"({"contents":[{"role":"user","parts":[{"text":"hello world, how are you"}]}]})", bearer);
    REQUIRE(gemini);
    CHECK(gemini->body == R"({"totalTokens":7})");
    auto claude = nous::http::post(
        server.base_url() +
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
        R"({"model":"c","messages":[{"role":"user","content":"hello world, how are you"}]})",
        bearer);
    REQUIRE(claude);
    CHECK(claude->body == R"({"input_tokens":7})");
}

TEST_CASE(
    "count_tokens on Vertex: Gemini's :countTokens and Anthropic's count-tokens, with the bearer") {
    MockServer server;
    server.start();
    GoogleEnv env("/nonexistent/key.json");
    for (Provider p : {Provider::vertex, Provider::vertex_anthropic}) {
        INFO(to_string(p));
        ChatRequest r = vertex(p, server.base_url() + "/v1", "a-model");
        r.api_key = "ya29.caller";
        r.project = "p1";
        r.system = "Be brief.";
        r.max_tokens = 50;
        auto n = count_tokens(r);
        INFO((n ? std::string() : n.error().message));
        REQUIRE(n);
        CHECK(n.value() > 0);
        CHECK(server.last_request().header("authorization") ==
              std::optional<std::string>("Bearer ya29.caller"));
        auto body = nous::http::parse_json(server.last_request().body);
        REQUIRE(body);
        if (p == Provider::vertex) {
            CHECK(server.last_request().target ==
                  "/v1/projects/p1/locations/global/publishers/google/models/a-model:countTokens");
            CHECK(body.value()->HasMember("contents"));
        } else {
            CHECK(server.last_request().target ==
                  "/v1/projects/p1/locations/global/publishers/anthropic/models/"
                  "count-tokens:rawPredict");
            CHECK(std::string((*body.value())["model"].GetString()) == "a-model");
            CHECK_FALSE(body.value()->HasMember("max_tokens"));
        }
    }
}

TEST_CASE(
    "vertex: without a token or a key file, the metadata server's token, and a silent one "
    "refused") {
    MockServer server;
    std::atomic<int> asked{0};
    server.set_handler([&](const nous::http::MockRequest& req, nous::http::MockResponse& res) {
        if (req.target != "/computeMetadata/v1/instance/service-accounts/default/token")
            return false;
        ++asked;
        if (req.method != "GET" ||
            req.header("metadata-flavor") != std::optional<std::string>("Google")) {
            res.status = 403;
            return true;
        }
        res.body = R"({"access_token":"ya29.metadata","expires_in":3599,"token_type":"Bearer"})";
        return true;
    });
    server.start();
    GoogleEnv env("/nonexistent/key.json");
    ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    const std::string host = server.base_url().substr(std::string("http://").size());
    ::setenv("GCE_METADATA_HOST", host.c_str(), 1);
    ChatRequest r = vertex(Provider::vertex, server.base_url() + "/v1", "g");
    r.project = "p1";
    r.stream = false;
    auto result = run_chat(r);
    auto again = run_chat(r);
    INFO((result ? std::string() : result.error().message));
    REQUIRE(result);
    REQUIRE(again);
    CHECK(server.last_request().header("authorization") ==
          std::optional<std::string>("Bearer ya29.metadata"));
    CHECK(asked == 1);  // the token kept for the process
    // A metadata server that is not there: refused before the model is called, naming the chain.
    ::setenv("GCE_METADATA_HOST", "127.0.0.1:1", 1);
    nous::http::MockServer model;
    model.start();
    ChatRequest elsewhere = vertex(Provider::vertex, model.base_url() + "/v1", "g");
    elsewhere.project = "p1";
    // (a new host: its own token, not the cached one)
    auto refused = build_chat_call(elsewhere);
    ::unsetenv("GCE_METADATA_HOST");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(refused.error().message, Catch::Contains("GOOGLE_APPLICATION_CREDENTIALS"));
    CHECK_THAT(refused.error().message, Catch::Contains("GCE_METADATA_HOST"));
}
