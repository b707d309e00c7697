// nouscli end to end: the exact interface and exit codes of docs/design/nouscli.md.

#include <sys/wait.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "cli_run.hpp"
#include "fault_server.hpp"
#include "firehose.hpp"
#include "nous/http/json.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;
using namespace nous::test;

TEST_CASE("nouscli post prints the body byte-exact and exits 0") {
    MockServer server;
    server.start();
    auto r = nouscli({"post", server.base_url() + "/large", "-d", "{}"});
    CHECK(r.code == 0);
    CHECK(r.out == MockServer::large_body());
}

TEST_CASE(
    "nouscli -d @FILE and @- read the body, Content-Type defaults to JSON and -H replaces it") {
    MockServer server;
    server.start();
    std::string path = "/tmp/nouscli-body-" + std::to_string(::getpid());
    std::ofstream(path) << R"({"from":"file"})";
    auto a = nouscli({"post", server.base_url() + "/echo", "-d", "@" + path});
    CHECK(a.code == 0);
    CHECK(a.out == R"({"from":"file"})");
    CHECK(server.last_request().header("content-type") ==
          std::optional<std::string>("application/json"));
    auto b =
        nouscli({"post", server.base_url() + "/echo", "-d", "@-", "-H", "Content-Type: text/plain"},
                "from stdin");
    CHECK(b.code == 0);
    CHECK(b.out == "from stdin");
    CHECK(server.last_request().header("content-type") == std::optional<std::string>("text/plain"));
    std::remove(path.c_str());
}

TEST_CASE(
    "regression: nouscli -d @DIR aborted with exit 134, any @FILE read error exits 2 and says "
    "why") {
    MockServer server;
    server.start();
    for (const std::string arg : {"@/tmp", "@/nonexistent/nouscli-body", "@/proc/self/mem"}) {
        INFO(arg);
        auto r = nouscli({"post", server.base_url() + "/echo", "-d", arg});
        CHECK(r.code == 2);
        CHECK(r.err.find("cannot read") != std::string::npos);
    }
    CHECK(server.requests_served() == 0);
}

TEST_CASE("nouscli -v redacts api_key, access_token and the other credential query parameters") {
    MockServer server;
    server.start();
    auto r = nouscli({"post",
                      server.base_url() + "/small?api_key=S1&access_token=S2&Signature=S3&alt=sse",
                      "-v"});
    CHECK(r.code == 0);
    CHECK(r.err.find("api_key=[REDACTED]") != std::string::npos);
    CHECK(r.err.find("alt=sse") != std::string::npos);
    for (const char* secret : {"S1", "S2", "S3"}) CHECK(r.err.find(secret) == std::string::npos);
}

TEST_CASE("nouscli exit codes: 5 for >= 400 with the body, 0 for a 3xx, 3 refused, 4 timeout") {
    MockServer server;
    server.set_handler([](const MockRequest& req, MockResponse& res) {
        if (req.target == "/redirect") {
            res.status = 302;
            res.headers = {{"Location", "http://example.com/"}};
            res.body = "moved";
            return true;
        }
        return false;
    });
    server.start();
    auto missing = nouscli({"post", server.base_url() + "/nope", "-d", "{}"});
    CHECK(missing.code == 5);
    CHECK(missing.out.find("no such route") != std::string::npos);
    auto redirect = nouscli({"post", server.base_url() + "/redirect", "-d", "{}"});
    CHECK(redirect.code == 0);
    CHECK(redirect.out == "moved");
    CHECK(nouscli({"post", "http://127.0.0.1:1/x"}).code == 3);

    FaultServer silent([](Peer& peer, std::uint64_t) {
        if (peer.read_request()) peer.stall();
    });
    CHECK(nouscli({"post", silent.url(), "--timeout-ms", "200"}).code == 4);
}

TEST_CASE("nouscli: a truncated or malformed response exits 3") {
    FaultServer cut([](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort");
        peer.close_write();
    });
    CHECK(nouscli({"post", cut.url()}).code == 3);
}

TEST_CASE("nouscli: a bad header or URL exits 2 before any connection is opened") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("ok"));
    });
    CHECK(nouscli({"post", server.url(), "-H", std::string("X-A: v\r\nX-Evil: 1")}).code == 2);
    CHECK(nouscli({"post", server.url(), "-H", "no colon"}).code == 2);
    CHECK(nouscli({"post", "ftp://127.0.0.1/x"}).code == 2);
    CHECK(nouscli({"post"}).code == 2);
    CHECK(nouscli({"post", server.url(), "--no-such-option"}).code == 2);
    CHECK(nouscli({"post", server.url(), "--backend", "no.such"}).code == 2);
    CHECK(server.connections() == 0);
}

TEST_CASE("nouscli -v shows timings and headers, with secrets redacted") {
    MockServer server;
    server.start();
    auto r = nouscli({"post", server.base_url() + "/small?key=URLSECRET", "-v", "-H",
                      "Authorization: Bearer sk-SECRET", "-H", "x-goog-api-key: GSECRET", "-H",
                      "X-Trace: visible-value"});
    CHECK(r.code == 0);
    CHECK(r.err.find("Authorization: [REDACTED]") != std::string::npos);
    CHECK(r.err.find("x-goog-api-key: [REDACTED]") != std::string::npos);
    CHECK(r.err.find("X-Trace: visible-value") != std::string::npos);
    CHECK(r.err.find("key=[REDACTED]") != std::string::npos);
    CHECK(r.err.find("SECRET") == std::string::npos);
    CHECK(r.err.find("first byte") != std::string::npos);
    CHECK(r.err.find("HTTP/1.1 200") != std::string::npos);
}

TEST_CASE(
    "nouscli -i prints the status line and headers to stderr and -o writes the body to a file") {
    MockServer server;
    server.start();
    std::string path = "/tmp/nouscli-out-" + std::to_string(::getpid());
    auto r = nouscli({"post", server.base_url() + "/small", "-i", "-o", path});
    CHECK(r.code == 0);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(slurp(path) == MockServer::small_body());
    std::remove(path.c_str());
}

TEST_CASE("nouscli: a closed stdout exits 0 quietly") {
    MockServer server;
    server.start();
    std::string cmd = "bash -c " + quote("set -o pipefail; " + quote(NOUSCLI_PATH) + " post " +
                                         server.base_url() + "/large | head -c 10 > /dev/null");
    int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

namespace {
const std::string kEvents =
    "event: delta\nid: 7\ndata: {\"t\":\"a\"}\n\n"
    "data: line1\ndata: line2\n\n"
    "id\ndata: \"q\"\n\n"
    "data: [DONE]\n\n";

/// Sends kEvents in pieces, then keeps the connection open (or cuts it).
FaultServer sse_server(bool cut_early = false) {
    return FaultServer([cut_early](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        if (cut_early) {
            peer.send(kSseHead + chunk("data: one\n\n") + chunk("data: tw"));
            peer.close_write();
            return;
        }
        peer.send(kSseHead + chunk(kEvents.substr(0, 20)) + chunk(kEvents.substr(20)));
        peer.stall();  // [DONE] must end the tool at once all the same
    });
}
}  // namespace

TEST_CASE("nouscli --stream prints each event's data per line and exits 0 at DONE") {
    auto server = sse_server();
    auto r = nouscli({"post", server.url("/v1/chat/completions"), "-d", "{}", "--stream"});
    CHECK(r.code == 0);
    CHECK(r.out == "{\"t\":\"a\"}\nline1\nline2\n\"q\"\n");
}

TEST_CASE("nouscli --stream --format jsonl: event name, decoded data, the last event id") {
    auto server = sse_server();
    auto r = nouscli({"post", server.url(), "--stream", "--format", "jsonl"});
    CHECK(r.code == 0);
    CHECK(r.out ==
          "{\"event\":\"delta\",\"data\":\"{\\\"t\\\":\\\"a\\\"}\",\"id\":\"7\"}\n"
          "{\"event\":\"message\",\"data\":\"line1\\nline2\",\"id\":\"7\"}\n"
          "{\"event\":\"message\",\"data\":\"\\\"q\\\"\",\"id\":\"\"}\n");
}

TEST_CASE(
    "nouscli --stream --format raw: the body after transfer decoding, up to and including DONE") {
    auto server = sse_server();
    auto r = nouscli({"post", server.url(), "--stream", "--format", "raw"});
    CHECK(r.code == 0);
    CHECK(r.out == kEvents);
}

TEST_CASE(
    "nouscli --stream: a body that ends mid-stream exits 3, a 500 prints its body and exits 5") {
    auto cut = sse_server(/*cut_early=*/true);
    auto r = nouscli({"post", cut.url(), "--stream"});
    CHECK(r.code == 3);
    CHECK(r.out == "one\n");
    MockServer server;
    server.set_handler([](const MockRequest&, MockResponse& res) {
        res.status = 500;
        res.body = "{\"error\":\"boom\"}";
        return true;
    });
    server.start();
    auto e = nouscli({"post", server.base_url() + "/v1/chat/completions", "--stream"});
    CHECK(e.code == 5);
    CHECK(e.out == "{\"error\":\"boom\"}");
}

TEST_CASE("nouscli --stream: an event over 10 MiB exits 6, an event of 10 MiB is delivered whole") {
    FaultServer server([](Peer& peer, std::uint64_t index) {
        if (!peer.read_request()) return;
        std::string data(10u << 20, 'x');
        if (index == 1) data += 'y';
        std::string body = "data: " + data + "\n\ndata: [DONE]\n\n";
        peer.send("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                  body);
    });
    auto ok = nouscli({"post", server.url(), "--stream"});
    CHECK(ok.code == 0);
    CHECK(ok.out.size() == (10u << 20) + 1);
    auto over = nouscli({"post", server.url(), "--stream"});
    CHECK(over.code == 6);
    CHECK(over.err.find("buffer_overflow") != std::string::npos);
}

TEST_CASE("nouscli --stream -i prints the status line and headers to stderr") {
    auto server = sse_server();
    auto r = nouscli({"post", server.url(), "--stream", "-i"});
    CHECK(r.code == 0);
    CHECK(r.err.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(r.err.find("content-type: text/event-stream") != std::string::npos);
}

TEST_CASE("nouscli --stream: a bad --format is a usage error") {
    CHECK(nouscli({"post", "http://127.0.0.1:1/x", "--stream", "--format", "xml"}).code == 2);
}

TEST_CASE("nouscli --stream: a closed stdout cancels the request and exits 0") {
    MockServerOptions o;
    o.stream_tokens = 100000;
    MockServer server(o);
    server.start();
    std::string cmd =
        "bash -c " +
        quote("set -o pipefail; " + quote(NOUSCLI_PATH) + " post " + server.base_url() +
              "/v1/chat/completions -d '{\"stream\":true}' --stream | head -n 2 > /dev/null");
    int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("nouscli mock-server serves completions on the port it prints") {
    std::string log = "/tmp/nouscli-mock-" + std::to_string(::getpid());
    std::string cmd = quote(NOUSCLI_PATH) + " mock-server --port 0 > " + log + " 2>&1 & echo $!";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    int pid = 0;
    REQUIRE(std::fscanf(p, "%d", &pid) == 1);
    ::pclose(p);
    std::string url;
    REQUIRE(wait_until([&] {
        std::string text = slurp(log);
        auto at = text.find("http://");
        if (at == std::string::npos || text.find('\n', at) == std::string::npos) return false;
        url = text.substr(at, text.find('\n', at) - at);
        return true;
    }));
    auto r =
        nouscli({"post", url + "/v1/chat/completions", "-d", R"({"model":"m","messages":[]})"});
    ::kill(pid, SIGTERM);
    CHECK(r.code == 0);
    CHECK(r.out.find("chat.completion") != std::string::npos);
    std::remove(log.c_str());
}

TEST_CASE("nouscli --stream: while stdout is not read, the window holds and memory stays bounded") {
    // A pipe nobody reads: nouscli blocks writing, stops consuming, its reader
    // parks, and TCP holds the server back. Its peak RSS must stay far below
    // what the server wanted to send (256 MiB).
    Firehose firehose(256ull << 20);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    // Built before fork(): the child of a process with threads may not
    // allocate (under ASan it hung on the allocator's lock, held at the fork).
    const std::string url = firehose.server.url();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipe_fds[1], 1);
        ::close(pipe_fds[0]);
        ::execl(NOUSCLI_PATH, "nouscli", "post", url.c_str(), "--stream", (char*)nullptr);
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    REQUIRE(wait_until(
        [&] { return firehose.blocked.load() && firehose.written.load() > (8u << 20); }));
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    long hwm_kb = 0;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) hwm_kb = std::stol(line.substr(6));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(pipe_fds[0]);
    CHECK(hwm_kb > 0);
#ifndef NOUS_SANITIZED
    // Sanitizers' shadow memory multiplies RSS: the bound holds for real builds.
    CHECK(hwm_kb < 64 * 1024);  // MiB-scale bound: window 8 MiB + buffers
#endif
    CHECK(firehose.written.load() < (64ull << 20));  // the server was held back
}

TEST_CASE(
    "deep JSON crashes nouscli: a 429 with 200 KB of open brackets exits 5 with the body, never "
    "139") {
    const std::string deep(200 * 1024, '[');
    FaultServer server([&](Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send("HTTP/1.1 429 Too Many Requests\r\nContent-Length: " +
                      std::to_string(deep.size()) + "\r\n\r\n" + deep);
    });
    auto r = nouscli({"post", server.url(), "-d", "{}", "--retry", "0"});
    CHECK(r.code == 5);
    CHECK(r.out == deep);
}

TEST_CASE("a POST that reached the server is connection_closed: nouscli exits 3 and says so") {
    std::atomic<int> requests{0};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (peer.read_request()) ++requests;  // then close without answering
    });
    auto r = nouscli({"post", server.url(), "-d", R"({"a":1})"});
    CHECK(r.code == 3);
    CHECK(r.err.find("connection_closed") != std::string::npos);
    CHECK(requests.load() == 1);  // --retry defaults to 0
}

TEST_CASE(
    "nouscli --max-wait-ms with a stdout that accepts nothing never exited: it gives up with exit "
    "6") {
    Firehose firehose(256ull << 20);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const std::string url = firehose.server.url();  // before fork(): see above
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipe_fds[1], 1);
        ::close(pipe_fds[0]);
        ::execl(NOUSCLI_PATH, "nouscli", "post", url.c_str(), "--stream", "--max-wait-ms", "300",
                (char*)nullptr);
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    // Nobody reads the pipe. The hang guard: 60 s, far beyond the 300 ms asked for.
    int status = 0;
    const bool exited = wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; },
                                   std::chrono::seconds(60));
    if (!exited) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    ::close(pipe_fds[0]);
    REQUIRE(exited);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 6);
}

TEST_CASE(
    "nouscli -v printed user:pass@ of a URL: credentials are redacted, and sent as Basic auth") {
    std::mutex mutex;
    std::string head;
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string h;
        if (!peer.read_request(&h)) return;
        {
            std::lock_guard lock(mutex);
            head = h;
        }
        peer.send(ok_response("ok"));
    });
    const std::string url =
        "http://alice:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/x?key=k123";
    auto r = nouscli({"post", url, "-v", "-d", "{}"});
    std::lock_guard lock(mutex);
    CHECK(r.code == 0);
    CHECK(r.err.find("s3cret") == std::string::npos);
    CHECK(r.err.find("k123") == std::string::npos);
    CHECK(r.err.find("[REDACTED]@127.0.0.1") != std::string::npos);
    CHECK(head.find("Authorization: Basic YWxpY2U6czNjcmV0\r\n") !=
          std::string::npos);  // alice:s3cret
}

// ---- nouscli chat ---------------------------------------------------------

namespace {

struct ChatEnv {
    ChatEnv() {
        ::setenv("OPENAI_API_KEY", "sk-openai", 1);
        ::setenv("ANTHROPIC_API_KEY", "sk-ant", 1);
        ::setenv("GEMINI_API_KEY", "g-key", 1);
    }
    ~ChatEnv() {
        ::unsetenv("OPENAI_API_KEY");
        ::unsetenv("ANTHROPIC_API_KEY");
        ::unsetenv("GEMINI_API_KEY");
    }
};

std::string base_for(const std::string& provider, const std::string& server) {
    return server + (provider == "gemini" ? "/v1beta" : "/v1");
}

}  // namespace

TEST_CASE("nouscli chat: a --max-tokens below 1 exits 2 before any connection, never dropped") {
    ChatEnv env;
    FaultServer server([](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("{}"));
    });
    for (const char* value : {"0", "-5"}) {
        INFO(value);
        auto r = nouscli({"chat", "Hi", "--model", "m", "--max-tokens", value, "--base-url",
                          server.url() + "/v1"});
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Contains("max_tokens"));
    }
    CHECK(server.connections() == 0);
}

TEST_CASE(
    "nouscli chat prints the text for each provider, and --json the message with tool calls and "
    "usage") {
    ChatEnv env;
    MockServerOptions o;
    o.stream_tokens = 6;
    MockServer plain(o);
    plain.start();
    o.tool_call = "get_weather";
    MockServer tools(o);
    tools.start();
    for (std::string provider : {"openai", "anthropic", "gemini"}) {
        CAPTURE(provider);
        auto text = nouscli({"chat", "Say hello", "--provider", provider, "--base-url",
                             base_for(provider, plain.base_url()), "--model", "m1"});
        CHECK(text.code == 0);
        CHECK(text.out == "Hello from the nous-http mock\n");
        // Options after the prompt, or before it, and the prompt from stdin.
        auto before = nouscli({"chat", "--model", "m1", "--provider", provider, "--base-url",
                               base_for(provider, plain.base_url()), "-", "--no-stream"},
                              "Say hello");
        CHECK(before.code == 0);
        CHECK(before.out == "Hello from the nous-http mock\n");
        for (bool stream : {true, false}) {
            std::vector<std::string> args = {
                "chat",    "Weather?",   "--provider",
                provider,  "--base-url", base_for(provider, tools.base_url()),
                "--model", "m1",         "--json"};
            if (!stream) args.push_back("--no-stream");
            auto json = nouscli(args);
            CHECK(json.code == 0);
            auto doc = parse_json(json.out);
            REQUIRE(doc.ok());
            const auto& m = *doc.value();
            CHECK(std::string(m["text"].GetString()) == "Hello from the nous-http mock");
            REQUIRE(m["tool_calls"].Size() == 1);
            CHECK(std::string(m["tool_calls"][0]["name"].GetString()) == "get_weather");
            auto arguments = parse_json(m["tool_calls"][0]["arguments"].GetString());
            REQUIRE(arguments.ok());
            CHECK(std::string((*arguments.value())["city"].GetString()) == "Paris");
            CHECK(m["usage"]["output_tokens"].GetInt64() > 0);
            CHECK(m["finish_reason"].IsString());
        }
    }
}

TEST_CASE("nouscli chat sends each provider's documented request") {
    ChatEnv env;
    std::mutex mutex;
    std::vector<std::pair<std::string, std::string>> seen;  // head, body
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string head, body;
        while (peer.read_request(&head, &body)) {
            {
                std::lock_guard lock(mutex);
                seen.emplace_back(head, body);
            }
            peer.send(ok_response("{}"));
        }
    });
    const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
    nouscli({"chat", "Hi", "--model", "gpt-x", "--system", "Be brief.", "--max-tokens", "7",
             "--base-url", base + "/v1"});
    nouscli({"chat", "Hi", "--provider", "anthropic", "--model", "claude-x", "--base-url",
             base + "/v1"});
    nouscli({"chat", "Hi", "--provider", "gemini", "--model", "gem-x", "--system", "S",
             "--base-url", base + "/v1beta"});
    std::lock_guard lock(mutex);
    REQUIRE(seen.size() == 3);
    auto body = [&](int i) { return parse_json(seen[i].second); };

    CHECK(seen[0].first.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0) == 0);
    CHECK(seen[0].first.find("\r\nauthorization: Bearer sk-openai\r\n") != std::string::npos);
    CHECK(seen[0].first.find("\r\nContent-Type: application/json\r\n") != std::string::npos);
    auto openai = body(0);
    REQUIRE(openai.ok());
    CHECK(*openai.value() ==
          *parse_json(R"({"model":"gpt-x","messages":[{"role":"system","content":"Be brief."},
        {"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":7})")
               .value());

    CHECK(seen[1].first.rfind("POST /v1/messages HTTP/1.1\r\n", 0) == 0);
    CHECK(seen[1].first.find("\r\nx-api-key: sk-ant\r\n") != std::string::npos);
    CHECK(seen[1].first.find("\r\nanthropic-version: 2023-06-01\r\n") != std::string::npos);
    auto anthropic = body(1);
    REQUIRE(anthropic.ok());
    CHECK(*anthropic.value() == *parse_json(R"({"model":"claude-x","max_tokens":1024,
        "messages":[{"role":"user","content":"Hi"}],"stream":true})")
                                     .value());

    CHECK(seen[2].first.rfind(
              "POST /v1beta/models/gem-x:streamGenerateContent?alt=sse HTTP/1.1\r\n", 0) == 0);
    CHECK(seen[2].first.find("\r\nx-goog-api-key: g-key\r\n") != std::string::npos);
    auto gemini = body(2);
    REQUIRE(gemini.ok());
    CHECK(*gemini.value() == *parse_json(R"({"contents":[{"role":"user","parts":[{"text":"Hi"}]}],
        "systemInstruction":{"parts":[{"text":"S"}]}})")
                                  .value());
}

TEST_CASE("nouscli chat: a missing key exits 2 before any connection") {
    MockServer server;
    server.start();
    ::unsetenv("OPENAI_API_KEY");
    auto r = nouscli({"chat", "Hi", "--model", "m", "--base-url", server.base_url() + "/v1"});
    CHECK(r.code == 2);
    CHECK(r.err.find("OPENAI_API_KEY") != std::string::npos);
    CHECK(server.connections_accepted() == 0);
    ::setenv("MY_KEY", "x", 1);
    auto custom = nouscli({"chat", "Hi", "--model", "m", "--api-key-env", "MY_KEY", "--base-url",
                           server.base_url() + "/v1"});
    ::unsetenv("MY_KEY");
    CHECK(custom.code == 0);
}

TEST_CASE(
    "nouscli chat: a 4xx prints the provider's message and exits 5, an in-stream error exits 6 "
    "after the text") {
    ChatEnv env;
    MockServer server;
    server.set_handler([](const MockRequest& req, MockResponse& res) {
        if (req.target == "/v1/messages") {
            res.status = 400;
            res.body =
                R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}})";
            return true;
        }
        res.headers.emplace_back("Content-Type", "text/event-stream");
        res.body =
            "event: message_start\ndata: "
            "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
            "\"delta\":{\"type\":\"text_delta\",\"text\":\"Part\"}}\n\n"
            "event: error\ndata: "
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
            "\"Overloaded\"}}\n\n";
        return true;
    });
    server.start();
    auto denied = nouscli({"chat", "Hi", "--provider", "anthropic", "--model", "m", "--base-url",
                           server.base_url() + "/v1"});
    CHECK(denied.code == 5);
    CHECK(denied.err.find("max_tokens: too big") != std::string::npos);
    auto broken = nouscli({"chat", "Hi", "--provider", "anthropic", "--model", "m", "--base-url",
                           server.base_url() + "/v2"});
    CHECK(broken.code == 6);
    CHECK(broken.out == "Part\n");
    CHECK(broken.err.find("Overloaded") != std::string::npos);
}

TEST_CASE(
    "nouscli chat: a stream cut before the provider's terminal signal prints the text so far and "
    "exits 3") {
    ChatEnv env;
    MockServer server;
    server.set_handler([](const MockRequest& req, MockResponse& res) {
        res.headers.emplace_back("Content-Type", "text/event-stream");
        res.headers.emplace_back("x-request-id", "req_cut");
        if (req.target == "/v1/chat/completions")  // no finish_reason anywhere, no [DONE]
            res.body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half\"}}]}\n\n";
        else if (req.target == "/v1/messages")  // no message_stop
            res.body =
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                "\"delta\":{\"type\":\"text_delta\",\"text\":\"Half\"}}\n\n";
        else  // Gemini without a finishReason
            res.body =
                "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Half\"}]}}]}\n\n";
        return true;
    });
    server.start();
    for (const char* provider : {"openai", "anthropic", "gemini"}) {
        INFO(provider);
        const std::string base =
            server.base_url() + (std::string(provider) == "gemini" ? "/v1beta" : "/v1");
        auto r =
            nouscli({"chat", "Hi", "--provider", provider, "--model", "m", "--base-url", base});
        CHECK(r.code == 3);
        CHECK(r.out == "Half\n");
        CHECK(r.err.find("truncated") != std::string::npos);
    }
}

TEST_CASE(
    "nouscli chat: an exhausted quota exits 5 at once whatever --retry says, and --json names the "
    "request id") {
    ChatEnv env;
    MockServer server;
    std::atomic<int> quota_calls{0};
    server.set_handler([&](const MockRequest& req, MockResponse& res) {
        if (req.target == "/quota/chat/completions") {
            ++quota_calls;
            res.status = 429;
            res.headers.emplace_back("x-request-id", "req_quota");
            res.body =
                R"({"error":{"message":"You exceeded your current quota.","type":"insufficient_quota",)"
                R"("code":"insufficient_quota"}})";
            return true;
        }
        return false;  // the mock's own chat route
    });
    server.start();
    auto quota = nouscli(
        {"chat", "Hi", "--model", "m", "--retry", "3", "--base-url", server.base_url() + "/quota"});
    CHECK(quota.code == 5);
    CHECK(quota.err.find("quota") != std::string::npos);
    CHECK(quota_calls == 1);
    auto ok =
        nouscli({"chat", "Hi", "--model", "m", "--json", "--base-url", server.base_url() + "/v1"});
    CHECK(ok.code == 0);
    auto message = parse_json(ok.out);
    REQUIRE(message.ok());
    REQUIRE((*message.value()).HasMember("request_id"));
    CHECK(std::string((*message.value())["request_id"].GetString()).rfind("req_mock_", 0) == 0);
}

TEST_CASE("nouscli chat: each x-mock-fault gives its exit code, for every provider") {
    ChatEnv env;
    struct Expect {
        std::string fault;
        std::vector<std::string> extra;
        int code;
        std::uint64_t requests;
        std::string stdout_text;  ///< exactly, when not "*"
        std::string on_stderr;
    };
    const std::vector<Expect> expectations = {
        {"rate_limit", {"--retry", "1"}, 5, 2, "", ""},  // retried after the mock's 20 ms hint
        {"quota", {"--retry", "3"}, 5, 1, "", "quota"},  // never retried
        {"overloaded", {"--retry", "0"}, 5, 1, "", "verloaded"},
        {"server_error", {"--retry", "0"}, 5, 1, "", ""},
        {"midstream_error", {}, 6, 1, "Hello from the\n", "error in the stream"},
        {"truncate", {}, 3, 1, "Hello from the\n", "truncated"},
        {"keepalive_only",
         {"--event-timeout-ms", "300", "--timeout-ms", "60000"},
         4,
         1,
         "",
         "event_idle_timeout"},
        {"slow_first_token",
         {"--event-timeout-ms", "60000", "-H", "x-mock-fault-ms: 200"},
         0,
         1,
         "*",
         ""},
    };
    for (const std::string provider : {"openai", "anthropic", "gemini", "openai-responses"}) {
        for (const Expect& expect : expectations) {
            INFO(provider << " " << expect.fault);
            MockServer server;
            server.start();
            std::vector<std::string> args = {"chat",       "Hi",
                                             "--provider", provider,
                                             "--model",    "m",
                                             "--base-url", base_for(provider, server.base_url()),
                                             "-H",         "x-mock-fault: " + expect.fault};
            args.insert(args.end(), expect.extra.begin(), expect.extra.end());
            auto r = nouscli(args);
            CHECK(r.code == expect.code);
            CHECK(server.requests_served() == expect.requests);
            if (expect.stdout_text != "*") CHECK(r.out == expect.stdout_text);
            if (expect.code == 0) CHECK(r.out.rfind("Hello from the nous-http mock", 0) == 0);
            if (!expect.on_stderr.empty()) CHECK_THAT(r.err, Catch::Contains(expect.on_stderr));
        }
    }
}

namespace {

std::string temp_file_with(const std::string& name, const std::string& text) {
    const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                             "/nouscli_" + std::to_string(::getpid()) + "_" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

}  // namespace

TEST_CASE("nouscli chat: a tool loop through --json's message and --messages, for every format") {
    ChatEnv env;
    MockServer server;
    server.start();
    const std::string tools =
        temp_file_with("tools.json", R"([{"name":"get_weather","parameters":{"type":"object"}}])");
    for (const std::string provider : {"openai", "openai-responses", "anthropic", "gemini"}) {
        INFO(provider);
        const std::string base = base_for(provider, server.base_url());
        auto first = nouscli({"chat", "Weather in Paris?", "--provider", provider, "--model", "m",
                              "--base-url", base, "--tools", tools, "--reasoning", "low", "--json",
                              "--show-reasoning"});
        REQUIRE(first.code == 0);
        CHECK(first.err.find("Thinking about the answer.") != std::string::npos);  // stderr only
        auto turn = parse_json(first.out);
        REQUIRE(turn.ok());
        const auto& t = *turn.value();
        CHECK(std::string(t["reasoning"].GetString()) == "Thinking about the answer.");
        REQUIRE(t["tool_calls"].Size() == 1);
        // The conversation file: the question, the message as --json gave it, the result.
        std::string conversation = R"([{"role":"user","content":"Weather in Paris?"},)" +
                                   first.out.substr(first.out.find("\"message\":") + 10);
        conversation = conversation.substr(0, conversation.rfind('}'));  // drop the outer '}'
        conversation += R"(,{"role":"tool","tool_call_id":)" + std::string("\"") +
                        t["tool_calls"][0]["id"].GetString() + R"(","content":"{\"c\":18}"}])";
        const std::string file = temp_file_with("conv.json", conversation);
        auto second =
            nouscli({"chat", "--provider", provider, "--model", "m", "--base-url", base, "--tools",
                     tools, "--reasoning", "low", "--messages", file, "--json"});
        INFO(second.err);
        REQUIRE(second.code == 0);
        auto answer = parse_json(second.out);
        REQUIRE(answer.ok());
        CHECK((*answer.value())["tool_calls"].Size() == 0);  // the mock answers a result in text
        CHECK(std::string((*answer.value())["text"].GetString()).rfind("Hello from the", 0) == 0);
    }
}

TEST_CASE("nouscli chat: --image goes on the prompt, and bad --messages or --reasoning exit 2") {
    ChatEnv env;
    MockServer server;
    server.start();
    auto with_image =
        nouscli({"chat", "What is this?", "--model", "m", "--base-url", server.base_url() + "/v1",
                 "--image", "data:image/png;base64,iVBORw0KGgo="});
    CHECK(with_image.code == 0);
    auto sent = parse_json(server.last_request().body);
    REQUIRE(sent.ok());
    const auto& content = (*sent.value())["messages"][0]["content"];
    REQUIRE(content.IsArray());
    CHECK(std::string(content[1]["image_url"]["url"].GetString()) ==
          "data:image/png;base64,iVBORw0KGgo=");
    const auto served = server.requests_served();
    const std::string bad = temp_file_with("bad.json", R"([{"role":"robot","content":"x"}])");
    auto bad_messages = nouscli(
        {"chat", "--model", "m", "--base-url", server.base_url() + "/v1", "--messages", bad});
    CHECK(bad_messages.code == 2);
    CHECK_THAT(bad_messages.err, Catch::Contains("message 0"));
    auto bad_effort = nouscli({"chat", "hi", "--model", "m", "--reasoning", "max"});
    CHECK(bad_effort.code == 2);
    auto missing = nouscli({"chat", "hi", "--model", "m", "--messages", "/no/such/file"});
    CHECK(missing.code == 2);
    CHECK(server.requests_served() == served);  // nothing was sent
}

TEST_CASE(
    "nouscli chat -v prints the response's request id and rate-limit headers, on errors too") {
    ChatEnv env;
    MockServer server;
    server.start();
    for (const std::string provider : {"openai", "anthropic"}) {
        INFO(provider);
        const std::string base = base_for(provider, server.base_url());
        auto ok = nouscli(
            {"chat", "hi", "--provider", provider, "--model", "m", "--base-url", base, "-v"});
        CHECK(ok.code == 0);
        const std::string limit_header = provider == "anthropic"
                                             ? "< anthropic-ratelimit-requests-remaining: 49"
                                             : "< x-ratelimit-remaining-requests: 4999";
        CHECK_THAT(ok.err, Catch::Contains(limit_header));
        CHECK_THAT(ok.err, Catch::Contains("* request id req_mock_"));
        CHECK(ok.out.find("ratelimit") == std::string::npos);  // stderr only
        auto limited = nouscli({"chat", "hi", "--provider", provider, "--model", "m", "--base-url",
                                base, "-v", "-H", "x-mock-fault: rate_limit"});
        CHECK(limited.code == 5);
        CHECK_THAT(limited.err, Catch::Contains("< retry-after-ms: 20"));
        CHECK_THAT(limited.err, Catch::Contains(provider == "anthropic" ? "requests-remaining: 0"
                                                                        : "remaining-requests: 0"));
    }
}

// ---- extreme option values (each named after its finding) -------------------------

TEST_CASE(
    "huge_timeouts: a timeout near milliseconds::max() means no timeout, never one that "
    "fires at once") {
    // The finding: --timeout-ms 9223372036854775807 exited 4 at once (a signed
    // overflow in the deadline's sum), as did the connect and event timeouts.
    MockServer server;
    server.start();
    const std::string chat_url = server.base_url() + "/v1/chat/completions";
    const std::string body = R"({"model":"m","stream":true,"messages":[]})";
    for (const std::string value : {"9223372036854775807", "9223372036854775",
                                    "4611686018427387904", "2147483648", "86400000"}) {
        INFO("value " << value);
        for (const std::string option : {"--timeout-ms", "--connect-timeout-ms"}) {
            INFO(option);
            auto whole = nouscli({"post", server.base_url() + "/small", "-d", "{}", option, value});
            CHECK(whole.code == 0);
            auto streamed = nouscli({"post", chat_url, "-d", body, "--stream", option, value});
            CHECK(streamed.code == 0);
        }
        auto parked = nouscli({"post", chat_url, "-d", body, "--stream", "--max-wait-ms", value});
        CHECK(parked.code == 0);
        ::setenv("OPENAI_API_KEY", "sk-test", 1);
        auto chat = nouscli({"chat", "hi", "--model", "m", "--base-url", server.base_url() + "/v1",
                             "--event-timeout-ms", value, "--timeout-ms", value});
        ::unsetenv("OPENAI_API_KEY");
        CHECK(chat.code == 0);
    }
    // Below the range: refused as a usage error, before any connection.
    for (const std::string value : {"-1", "-9223372036854775808", "abc"}) {
        INFO("value " << value);
        auto r = nouscli({"post", server.base_url() + "/small", "-d", "{}", "--timeout-ms", value});
        CHECK(r.code == 2);
    }
}

TEST_CASE(
    "mock_server_options: every nouscli mock-server option is checked, with a clear "
    "error") {
    // The finding: --tokens -1 was accepted and then streamed for ever.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--tokens", "-1"},
                                               {"--tokens-per-second", "-5"},
                                               {"--tokens-per-second", "nan"},
                                               {"--first-token-ms", "-1"},
                                               {"--port", "70000"},
                                               {"--tokens", "many"}}) {
        std::vector<std::string> all = {"mock-server"};
        all.insert(all.end(), args.begin(), args.end());
        INFO(args[0] << " " << args[1]);
        auto r = nouscli(all);
        CHECK(r.code == 2);
        CHECK(r.err.find("nouscli") != std::string::npos);
    }
}

// ---- structured outputs through nouscli chat (every format) --------------------------

namespace {

std::string schema_file() {
    const std::string path = "/tmp/nouscli-schema-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path)
        << R"({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},)"
           R"("required":["city","days"],"additionalProperties":false})";
    return path;
}

}  // namespace

TEST_CASE(
    "nouscli chat --schema: the JSON answer, --partial lines, tool_choice required, the "
    "schema_violation and refusal faults, for every provider") {
    ChatEnv env;
    MockServer server;
    server.start();
    const std::string schema = schema_file();
    for (const std::string provider : {"openai", "openai-responses", "anthropic", "gemini"}) {
        INFO(provider);
        const std::vector<std::string> base = {
            "chat",       "plan",   "--model",    "m",
            "--provider", provider, "--base-url", base_for(provider, server.base_url())};
        auto with = [&](std::vector<std::string> more) {
            std::vector<std::string> all = base;
            all.insert(all.end(), more.begin(), more.end());
            return nouscli(all);
        };
        auto json = with({"--schema", schema, "--json"});
        CHECK(json.code == 0);
        CHECK(json.out.find(R"("parsed":{"city":"mock","days":1})") != std::string::npos);
        auto partial = with({"--schema", schema, "--partial"});
        CHECK(partial.code == 0);
        const auto last_line =
            partial.out.substr(partial.out.rfind('\n', partial.out.size() - 2) + 1);
        CHECK(last_line == "{\"city\":\"mock\",\"days\":1}\n");
        CHECK(std::count(partial.out.begin(), partial.out.end(), '\n') >= 3);  // delta by delta
        auto broken = with({"--schema", schema, "-H", "x-mock-fault: schema_violation"});
        CHECK(broken.code == 7);
        CHECK(broken.err.find("/city: expected type string") != std::string::npos);
        CHECK(broken.out.find("\"city\":42") != std::string::npos);  // the text is kept
        auto refused = with({"--schema", schema, "-H", "x-mock-fault: refusal"});
        CHECK(refused.code == 7);
        CHECK(refused.err.find(provider == "gemini" ? "not JSON" : "refusal: ") !=
              std::string::npos);
        const std::string tools = "/tmp/nouscli-tools-" + std::to_string(::getpid()) + ".json";
        std::ofstream(tools)
            << R"([{"name":"get_weather","parameters":{"type":"object","properties":{}}}])";
        auto tool = with({"--tools", tools, "--tool-choice", "required", "--json"});
        CHECK(tool.code == 0);
        CHECK(tool.out.find(R"("name":"get_weather")") != std::string::npos);
        std::remove(tools.c_str());
    }
    std::remove(schema.c_str());
}

TEST_CASE(
    "nouscli chat: a field or schema the provider would refuse exits 2 before any "
    "connection") {
    ChatEnv env;
    const std::string schema = schema_file();
    const std::string loose = "/tmp/nouscli-loose-" + std::to_string(::getpid()) + ".json";
    std::ofstream(loose)
        << R"({"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{}}}},"required":["items"],"additionalProperties":false})";
    // Port 9 (discard) on loopback: nothing listens, and nothing may be tried.
    const std::string nowhere = "http://127.0.0.1:9/v1";
    auto seed = nouscli({"chat", "hi", "--model", "m", "--provider", "anthropic", "--base-url",
                         nowhere, "--seed", "1"});
    CHECK(seed.code == 2);
    CHECK(seed.err.find("seed is not supported by anthropic") != std::string::npos);
    auto plain = nouscli({"chat", "hi", "--model", "m", "--provider", "anthropic", "--base-url",
                          nowhere, "--json-object"});
    CHECK(plain.code == 2);
    auto strict = nouscli({"chat", "hi", "--model", "m", "--base-url", nowhere, "--schema", loose});
    CHECK(strict.code == 2);
    CHECK(strict.err.find("/properties/items/items: additionalProperties must be false") !=
          std::string::npos);
    auto both = nouscli(
        {"chat", "hi", "--model", "m", "--base-url", nowhere, "--schema", schema, "--json-object"});
    CHECK(both.code == 2);
    auto partial_alone =
        nouscli({"chat", "hi", "--model", "m", "--base-url", nowhere, "--partial"});
    CHECK(partial_alone.code == 2);
    auto extra =
        nouscli({"chat", "hi", "--model", "m", "--base-url", nowhere, "--extra-body", "[1]"});
    CHECK(extra.code == 2);
    std::remove(schema.c_str());
    std::remove(loose.c_str());
}

TEST_CASE(
    "nouscli count-tokens prints the provider's count, --json an object, and OpenAI chat exits 2") {
    MockServer server;
    server.start();
    ::setenv("ANTHROPIC_API_KEY", "sk-ant", 1);
    ::setenv("OPENAI_API_KEY", "sk-test", 1);
    const std::vector<std::string> anthropic = {
        "count-tokens", "What is the weather in Paris?", "--provider", "anthropic",
        "--base-url",   server.base_url() + "/v1",       "--model",    "m"};
    auto plain = nouscli(anthropic);
    INFO(plain.err);
    REQUIRE(plain.code == 0);
    const long long n = std::stoll(plain.out);
    CHECK(n > 0);
    CHECK(plain.out == std::to_string(n) + "\n");
    auto args = anthropic;
    args.push_back("--json");
    CHECK(nouscli(args).out == "{\"input_tokens\":" + std::to_string(n) + "}\n");
    // The chat call of the same request reports the same input tokens (the mock's count).
    auto chat = anthropic;
    chat[0] = "chat";
    chat.push_back("--json");
    CHECK_THAT(nouscli(chat).out, Catch::Contains("\"input_tokens\":" + std::to_string(n) + ","));
    const std::size_t served = server.requests_served();
    auto none =
        nouscli({"count-tokens", "hi", "--base-url", server.base_url() + "/v1", "--model", "m"});
    CHECK(none.code == 2);
    CHECK_THAT(none.err, Catch::Contains("openai has no token counter"));
    CHECK(server.requests_served() == served);  // refused before any connection
}

TEST_CASE("nouscli chat and embed on azure: api-key or an Entra ID token, and what exits 2 or 5") {
    MockServerOptions o;
    o.require_key = "az-key";
    MockServer server(o);
    server.start();
    const std::string v1 = server.base_url() + "/openai/v1";
    const std::string deployment = server.base_url() + "/openai/deployments/d1";
    ::unsetenv("AZURE_OPENAI_API_KEY");
    ::unsetenv("AZURE_OPENAI_AD_TOKEN");
    // No credential at all: exit 2 naming both variables, before any connection.
    auto none = nouscli({"chat", "hi", "--provider", "azure", "--base-url", v1, "--model", "m"});
    CHECK(none.code == 2);
    CHECK_THAT(none.err, Catch::Contains("AZURE_OPENAI_API_KEY and AZURE_OPENAI_AD_TOKEN"));
    ::setenv("AZURE_OPENAI_AD_TOKEN", "az-key", 1);
    auto token = nouscli(
        {"chat", "hi", "--provider", "azure-responses", "--base-url", v1, "--model", "m", "-v"});
    CHECK(token.code == 0);
    CHECK_FALSE(token.out.empty());
    CHECK_THAT(token.err, !Catch::Contains("az-key"));
    ::unsetenv("AZURE_OPENAI_AD_TOKEN");
    ::setenv("AZURE_OPENAI_API_KEY", "az-key", 1);
    auto versioned = nouscli({"chat", "hi", "--provider", "azure", "--base-url", deployment,
                              "--api-version", "2024-10-21", "--model", "m", "--json", "-v"});
    CHECK(versioned.code == 0);
    CHECK_THAT(versioned.out, Catch::Contains("\"text\""));
    CHECK_THAT(versioned.err, !Catch::Contains("az-key"));
    // Refused before any connection: no base URL; the deployments form without a version.
    auto no_base = nouscli({"chat", "hi", "--provider", "azure", "--model", "m"});
    CHECK(no_base.code == 2);
    CHECK_THAT(no_base.err, Catch::Contains("needs a base URL"));
    auto no_version =
        nouscli({"chat", "hi", "--provider", "azure", "--base-url", deployment, "--model", "m"});
    CHECK(no_version.code == 2);
    auto embedded = nouscli({"embed", "one", "two", "--provider", "azure", "--base-url",
                             server.base_url() + "/openai/deployments/emb", "--api-version",
                             "2024-10-21", "--model", "e", "--dimensions", "4"});
    CHECK(embedded.code == 0);
    CHECK_THAT(embedded.out, Catch::Contains("\"index\":1"));
    // A wrong key: Azure's words, exit 5, the key nowhere.
    ::setenv("AZURE_OPENAI_API_KEY", "wrong-key", 1);
    auto wrong =
        nouscli({"chat", "hi", "--provider", "azure", "--base-url", v1, "--model", "m", "-v"});
    CHECK(wrong.code == 5);
    CHECK_THAT(wrong.err, Catch::Contains("Access denied"));
    CHECK_THAT(wrong.err, !Catch::Contains("wrong-key"));
    ::unsetenv("AZURE_OPENAI_API_KEY");
}

TEST_CASE("nouscli chat on bedrock: SigV4 from the environment, and exits 0, 2, 5 and 6") {
    MockServer server;
    server.start();
    const std::string model = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    for (const char* name :
         {"AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_PROFILE"})
        ::unsetenv(name);
    ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
    ::unsetenv("AWS_REGION");
    const std::vector<std::string> base = {
        "chat", "hi", "--provider", "bedrock", "--base-url", server.base_url(), "--model", model};
    auto no_region = nouscli(base);
    CHECK(no_region.code == 2);
    CHECK_THAT(no_region.err, Catch::Contains("AWS_REGION"));
    auto with_region = base;
    with_region.insert(with_region.end(), {"--region", "us-east-1", "-v"});
    auto ok = nouscli(with_region);
    CHECK(ok.code == 0);
    CHECK_THAT(ok.out, Catch::Contains("Hello from the nous-http mock server"));
    CHECK_THAT(ok.err, !Catch::Contains("wJalrXUtnFEMI"));
    auto midstream = with_region;
    midstream.insert(midstream.end(), {"-H", "x-mock-fault: midstream_error", "--retry", "0"});
    auto broken = nouscli(midstream);
    CHECK(broken.code == 6);
    CHECK_THAT(broken.err, Catch::Contains("modelStreamErrorException"));
    auto failing = with_region;
    failing.insert(failing.end(), {"-H", "x-mock-fault: server_error", "--retry", "0"});
    auto failed = nouscli(failing);
    CHECK(failed.code == 5);
    CHECK_THAT(failed.err, Catch::Contains("InternalServerException"));
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
    auto no_keys = nouscli(with_region);
    CHECK(no_keys.code == 2);
    CHECK_THAT(no_keys.err, Catch::Contains("AWS_ACCESS_KEY_ID"));
    ::unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

TEST_CASE("nouscli chat on vertex: a token, or a key file exchanged at the token endpoint") {
    MockServer server;
    server.start();
    const std::string key =
        (std::filesystem::temp_directory_path() / "nous-cli-vertex.json").string();
    ::unsetenv("GOOGLE_CLOUD_PROJECT");
    ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    ::setenv("HOME", "/nonexistent", 1);
    ::setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.from-env", 1);
    const std::vector<std::string> base = {"chat",       "hi",
                                           "--provider", "vertex",
                                           "--base-url", server.base_url() + "/v1",
                                           "--model",    "gemini-2.5-flash"};
    auto no_project = nouscli(base);
    CHECK(no_project.code == 2);
    CHECK_THAT(no_project.err, Catch::Contains("GOOGLE_CLOUD_PROJECT"));
    auto with_project = base;
    with_project.insert(with_project.end(), {"--project", "p1", "--location", "us-central1", "-v"});
    auto ok = nouscli(with_project);
    CHECK(ok.code == 0);
    CHECK_THAT(ok.out, Catch::Contains("Hello from the nous-http mock server"));
    CHECK_THAT(ok.err, !Catch::Contains("ya29.from-env"));
    CHECK(server.last_request().target ==
          "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:"
          "streamGenerateContent?alt=sse");
    // A key file that is no service account: exit 2 naming the file.
    ::unsetenv("GOOGLE_OAUTH_ACCESS_TOKEN");
    std::ofstream(key) << R"({"type":"unknown"})";
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", key.c_str(), 1);
    auto bad_file = nouscli(with_project);
    CHECK(bad_file.code == 2);
    CHECK_THAT(bad_file.err, Catch::Contains("neither a service_account nor an authorized_user"));
    // An authorized_user file (gcloud's): its refresh token exchanged at its token URI.
    std::ofstream(key) << R"({"type":"authorized_user","client_id":"c","client_secret":"s",)"
                       << R"("refresh_token":"r","token_uri":")" << server.base_url()
                       << R"(/token"})";
    auto refreshed = nouscli(with_project);
    CHECK(refreshed.code == 0);
    CHECK(server.last_request().header("authorization")->starts_with("Bearer ya29.mock-"));
    ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
}
