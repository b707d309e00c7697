// The resolution chain, mirroring the Nous resolution suite.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <mutex>

#include "fault_server.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "nous/http/log.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"

using namespace nous::http;

namespace {

/// Answers without any HTTP: the body names the backend.
class NamedBackend : public Backend {
  public:
    explicit NamedBackend(std::string name) : name_(std::move(name)) {}
    Result<Response> post(const Request&, const Options&) override {
        Response r;
        r.status = 200;
        r.body = "backend:" + name_;
        return r;
    }

  private:
    std::string name_;
};

std::atomic<int> factory_runs{0};

void register_named(const std::string& name) {
    register_backend(name, [name] {
        ++factory_runs;
        return std::make_shared<NamedBackend>(name);
    });
}

struct LogCapture {
    std::mutex mutex;
    std::vector<std::string> lines;
    LogCapture() {
        set_log_sink([this](LogLevel, std::string_view m) {
            std::lock_guard lock(mutex);
            lines.emplace_back(m);
        });
    }
    ~LogCapture() { set_log_sink(nullptr); }
    int count(const std::string& needle) {
        std::lock_guard lock(mutex);
        int n = 0;
        for (auto& l : lines) n += l.find(needle) != std::string::npos;
        return n;
    }
};

struct Env {
    explicit Env(const char* value) {
        if (value)
            ::setenv("NOUS_HTTP_BACKEND", value, 1);
        else
            ::unsetenv("NOUS_HTTP_BACKEND");
    }
    ~Env() { ::unsetenv("NOUS_HTTP_BACKEND"); }
};

struct AppConfig {
    explicit AppConfig(std::optional<std::string> backend) {
        Config c;
        c.backend = std::move(backend);
        configure(c);
    }
    ~AppConfig() { configure({}); }
};

const char* kUnreachable = "http://127.0.0.1:1/v1/chat/completions";  // any real request fails

}  // namespace

TEST_CASE("per-call beats env beats config beats default") {
    register_named("test.a");
    register_named("test.b");
    register_named("test.c");
    MockServer server;
    server.start();
    AppConfig config("test.c");
    Env env("test.b");
    Options per_call;
    per_call.backend = "test.a";
    CHECK(post(kUnreachable, "{}", {}, per_call)->body == "backend:test.a");
    CHECK(post(kUnreachable, "{}")->body == "backend:test.b");
    ::unsetenv("NOUS_HTTP_BACKEND");
    CHECK(post(kUnreachable, "{}")->body == "backend:test.c");
    configure({});
    CHECK(resolve_backend_name({}).value() == "pooled");
    auto real = post(server.base_url() + "/small", "{}");
    REQUIRE(real.ok());
    CHECK(real->body == MockServer::small_body());
}

TEST_CASE("a custom backend answers without any HTTP request, its factory runs once") {
    register_named("test.once");
    int before = factory_runs;
    Options o;
    o.backend = "test.once";
    o.max_retries = 0;
    for (int i = 0; i < 3; ++i) CHECK(post(kUnreachable, "{}", {}, o)->body == "backend:test.once");
    CHECK(factory_runs == before + 1);
}

TEST_CASE("a custom backend's answer passes as it is, its Content-Encoding included") {
    // An application's backend may decode a coding itself and keep the
    // header (libcurl's CURLOPT_ACCEPT_ENCODING does): the library does not
    // second-guess it, as it does its own backends' answers.
    class DecodingBackend : public Backend {
      public:
        Result<Response> post(const Request&, const Options&) override {
            Response r;
            r.status = 200;
            r.headers = {{"content-encoding", "gzip"}};
            r.body = "{}";
            return r;
        }
    };
    register_backend("test.decoding", [] { return std::make_shared<DecodingBackend>(); });
    Options o;
    o.backend = "test.decoding";
    auto r = post("http://127.0.0.1:1/x", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == "{}");
}

TEST_CASE("an unknown name per call is invalid_argument and creates nothing") {
    Options o;
    o.backend = "no.such.backend";
    auto r = post(kUnreachable, "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::invalid_argument);
    auto names = backend_names();
    CHECK(std::find(names.begin(), names.end(), "no.such.backend") == names.end());
}

TEST_CASE("an unknown name in env falls back to config, warned once per name") {
    register_named("test.cfg");
    LogCapture log;
    AppConfig config("test.cfg");
    Env env("does.not.exist");
    CHECK(post(kUnreachable, "{}")->body == "backend:test.cfg");
    CHECK(post(kUnreachable, "{}")->body == "backend:test.cfg");
    CHECK(log.count("does.not.exist") == 1);
}

TEST_CASE("an unknown name in config falls back to the default") {
    LogCapture log;
    AppConfig config("config.typo");
    CHECK(resolve_backend_name({}).value() == "pooled");
    CHECK(resolve_backend_name({}).value() == "pooled");
    CHECK(log.count("config.typo") == 1);
}

#ifndef NOUS_HAVE_CURL
TEST_CASE(
    "a backend that is not compiled in falls back (per call, env, config) and the request "
    "succeeds") {
    MockServer server;
    server.start();
    register_named("test.fallback");
    LogCapture log;
    Options curl;
    curl.backend = "curl";
    {
        // per call -> app config
        AppConfig config("test.fallback");
        CHECK(post(kUnreachable, "{}", {}, curl)->body == "backend:test.fallback");
    }
    {
        // env -> no config -> default, a real request
        Env env("curl");
        auto r = post(server.base_url() + "/small", "{}");
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
    }
    {
        // config is the missing one, and per call too -> default
        AppConfig config("curl");
        auto r = post(server.base_url() + "/small", "{}", {}, curl);
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
    }
    CHECK(log.count("not compiled") >= 1);
}
#endif

namespace {

/// A careless application backend: writes with ::write(), no MSG_NOSIGNAL,
/// to a peer that reset the connection (a SIGPIPE without a guard), and sees
/// the headers the library adds.
class RawWriteBackend : public Backend {
  public:
    Result<Response> post(const Request& request, const Options&) override {
        for (const auto& [k, v] : *request.headers)
            if (k == "Idempotency-Key") saw_key = true;
        const auto colon = request.url.rfind(':');
        const int port = std::atoi(std::string(request.url.substr(colon + 1)).c_str());
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd);
            return Error(ErrorCode::connect_failed, "raw connect failed");
        }
        const std::string chunk(64 * 1024, 'x');
        // After the reset: ECONNRESET once, then EPIPE, which raises SIGPIPE.
        for (int i = 0; i < 2000; ++i)
            if (::write(fd, chunk.data(), chunk.size()) < 0 && errno == EPIPE) break;
        ::close(fd);
        return Error(ErrorCode::connection_closed, "the peer reset");
    }
    static inline std::atomic<bool> saw_key{false};
};

}  // namespace

TEST_CASE(
    "SIGPIPE never kills the process, whichever backend writes to a peer that reset (pooled, curl, "
    "custom)") {
    register_backend("test.rawwrite", [] { return std::make_shared<RawWriteBackend>(); });
    std::vector<std::string> backends{"pooled", "test.rawwrite"};
    for (const auto& n : backend_names())
        if (n == "curl") backends.push_back(n);
    // Only our guards stand between a write and the signal's default action (death).
    nous::test::SigpipeUnblocked unblocked;
    nous::test::FaultServer server([](nous::test::Peer& peer, std::uint64_t) { peer.reset(); });
    const std::string body(8 << 20, 'x');
    for (const auto& backend : backends) {
        INFO(backend);
        Options o;
        o.backend = backend;
        o.max_retries = 0;
        auto r = post(server.url("/"), body, {}, o);
        CHECK_FALSE(r.ok());
        sigset_t now;
        pthread_sigmask(SIG_SETMASK, nullptr, &now);
        CHECK(sigismember(&now, SIGPIPE) == 0);  // the caller's mask is restored
        CHECK_FALSE(unblocked.pending());        // and no SIGPIPE is left pending
    }
    CHECK(RawWriteBackend::saw_key);  // the adapter passed the library's headers on
}
