// The curl backend beyond the shared post contract: per-thread connection
// reuse, HTTP/2 by ALPN (against nghttpd), forcing HTTP/1.1, the idle timeout
// in milliseconds, cancellation.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/cancel.hpp"
#include "fault_server.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "nous/mock/mock_server.hpp"
#include "proxy_server.hpp"
#include "test_helpers.hpp"
#include "tls_fixture.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

Options curl() {
    Options o;
    o.backend = "curl";
    o.max_retries = 0;
    return o;
}

bool accepts(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

/// nghttpd (Debian's nghttp2-server) on loopback with the test certificate;
/// --echo-upload answers a POST with its body. It starts no system service.
struct Nghttpd {
    pid_t pid = -1;
    std::uint16_t port = unused_loopback_port();
    Nghttpd() {
        const auto& pki = test_pki();
        const std::string p = std::to_string(port);  // before fork(): no allocation in the child
        pid = ::fork();
        if (pid == 0) {
            ::execlp("nghttpd", "nghttpd", "--echo-upload", "--address=127.0.0.1", "-d",
                     pki.dir.c_str(), p.c_str(), pki.localhost_key.c_str(),
                     pki.localhost_cert.c_str(), (char*)nullptr);
            ::_exit(127);
        }
    }
    ~Nghttpd() {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
    }
    bool ready() {
        return wait_until([&] { return accepts(port); }, 10s);
    }
};

}  // namespace

TEST_CASE("curl: one easy handle per thread reuses its connection across requests") {
    MockServer server;
    server.start();
    for (int i = 0; i < 10; ++i) {
        auto r = post(server.base_url() + "/small", "{}", {}, curl());
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
        CHECK(r->connection_reused == (i > 0));
    }
    CHECK(server.connections_accepted() == 1);
    // Two more threads: one more connection each, reused within the thread.
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i)
                ok += post(server.base_url() + "/small", "{}", {}, curl()).ok();
        });
    for (auto& t : threads) t.join();
    CHECK(ok == 20);
    CHECK(server.connections_accepted() == 3);
}

TEST_CASE("curl: pool_clear() closes this thread's connection, at its next call") {
    MockServer server;
    server.start();
    REQUIRE(post(server.base_url() + "/small", "{}", {}, curl()).ok());
    REQUIRE(post(server.base_url() + "/small", "{}", {}, curl())->connection_reused);
    pool_clear();
    auto r = post(server.base_url() + "/small", "{}", {}, curl());
    REQUIRE(r.ok());
    CHECK_FALSE(r->connection_reused);
    CHECK(server.connections_accepted() == 2);
}

TEST_CASE("curl: HTTP/2 is negotiated by ALPN over TLS, and force_http1 keeps HTTP/1.1") {
    if (std::system("command -v nghttpd > /dev/null 2>&1") != 0) {
        FAIL("nghttpd is missing: make deps installs nghttp2-server");
    }
    Nghttpd server;
    REQUIRE(server.ready());
    Options o = curl();
    o.ca_file = test_pki().ca_cert;
    const std::string url = "https://localhost:" + std::to_string(server.port) + "/";
    auto r = post(url, R"({"echo":"h2"})", {}, o);
    REQUIRE(r.ok());
    CHECK(r->http_version == "HTTP/2");
    CHECK(r->body == R"({"echo":"h2"})");
    // nghttpd speaks only HTTP/2: with HTTP/1.1 forced, ALPN offers no h2 and it hangs up.
    o.force_http1 = true;
    auto h1 = post(url, R"({"echo":"h1"})", {}, o);
    CHECK_FALSE(h1.ok());
    // Forced HTTP/1.1 against an HTTP/1.1 TLS server works and says so.
    TlsServer http1(test_pki().localhost_cert, test_pki().localhost_key);
    auto ok = post("https://localhost:" + std::to_string(http1.port()) + "/", "{}", {}, o);
    REQUIRE(ok.ok());
    CHECK(ok->http_version == "HTTP/1.1");
}

TEST_CASE("curl: TLS verification is on: an untrusted certificate fails, the trusted CA passes") {
    const auto& pki = test_pki();
    TlsServer rogue(pki.rogue_cert, pki.rogue_key);
    Options o = curl();
    o.ca_file = pki.ca_cert;
    auto bad = post("https://localhost:" + std::to_string(rogue.port()) + "/", "{}", {}, o);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == ErrorCode::tls_failed);
    TlsServer good(pki.localhost_cert, pki.localhost_key);
    auto r = post("https://localhost:" + std::to_string(good.port()) + "/", "{}", {}, o);
    REQUIRE(r.ok());
    CHECK(r->body == "tls-ok");
    TlsServer wrong(pki.wrong_name_cert, pki.wrong_name_key);
    auto w = post("https://localhost:" + std::to_string(wrong.port()) + "/", "{}", {}, o);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().code == ErrorCode::tls_failed);
}

TEST_CASE("curl: the idle read timeout counts milliseconds") {
    FaultServer server([](Peer& peer, std::uint64_t) {
        if (peer.read_request()) peer.stall();
    });
    Options o = curl();
    o.read_timeout = 300ms;  // LOW_SPEED_TIME could only say 1 s
    auto r = post(server.url(), "{}", {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::timeout_read);
}

TEST_CASE("curl: unknown, reachable by env and config like any backend") {
    ::setenv("NOUS_HTTP_BACKEND", "curl", 1);
    CHECK(resolve_backend_name({}).value() == "curl");
    ::unsetenv("NOUS_HTTP_BACKEND");
    Config c;
    c.backend = "curl";
    configure(c);
    CHECK(resolve_backend_name({}).value() == "curl");
    configure({});
}

TEST_CASE("curl: https goes through https_proxy with CONNECT, and the host is still verified") {
    const auto& pki = test_pki();
    TlsServer origin(pki.localhost_cert, pki.localhost_key);
    ProxyServer proxy;
    ::setenv("https_proxy", proxy.url().c_str(), 1);
    Options o = curl();
    o.ca_file = pki.ca_cert;
    auto r = post("https://localhost:" + std::to_string(origin.port()) + "/", "{}", {}, o);
    ::unsetenv("https_proxy");
    REQUIRE(r.ok());
    CHECK(r->body == "tls-ok");
    CHECK(proxy.connects() == 1);
}

namespace {
/// The request header lines a server received, names lower-cased, in a set;
/// the library's own lines that legitimately differ are left out.
std::multiset<std::string> header_lines(const std::string& head) {
    std::multiset<std::string> lines;
    std::size_t at = head.find("\r\n");
    while (at != std::string::npos && at + 2 < head.size()) {
        const std::size_t end = head.find("\r\n", at + 2);
        std::string line =
            head.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
        at = end;
        if (line.empty()) break;
        const auto colon = line.find(':');
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (name == "user-agent" || name == "idempotency-key")
            value = "*";  // ours differ by design
        lines.insert(name + ":" + value);
    }
    return lines;
}
}  // namespace

TEST_CASE("regression: curl dropped empty header values, both backends send the same headers") {
    std::mutex mutex;
    std::vector<std::string> heads;
    FaultServer server([&](Peer& peer, std::uint64_t) {
        std::string head;
        while (peer.read_request(&head)) {
            {
                std::lock_guard lock(mutex);
                heads.push_back(head);
            }
            if (!peer.send(ok_response("{}"))) return;
        }
    });
    const Headers cases[] = {
        {{"X-Empty", ""}, {"X-Full", "v"}},
        {{"Content-Type", ""}},
        {{"Content-Type", "text/plain"}, {"Accept", ""}},
    };
    for (const Headers& headers : cases) {
        heads.clear();
        for (const char* backend : {"pooled", "curl"}) {
            Options o = curl();
            o.backend = backend;
            auto r = post(server.url("/h"), "{}", headers, o);
            REQUIRE(r.ok());
        }
        std::lock_guard lock(mutex);
        REQUIRE(heads.size() == 2);
        INFO("pooled:\n" << heads[0] << "\ncurl:\n" << heads[1]);
        CHECK(header_lines(heads[0]) == header_lines(heads[1]));
    }
    std::lock_guard lock(mutex);
    CHECK(header_lines(heads.back()).count("accept:") == 1);
}

// ---- regressions found by the hostile-server review (each named after its finding) ----

TEST_CASE("curl backend cancel: the token holds no registration once the transfer ended") {
    MockServer server;
    server.start();
    CancelToken token;
    Options o = no_retry();
    o.backend = "curl";
    o.cancel = &token;
    auto r = post(server.base_url() + "/small", "{}", {}, o);
    REQUIRE(r.ok());
    auto& state = detail::CancelAccess::state(token);
    std::lock_guard lock(state.mutex);
    CHECK(state.targets
              .empty());  // a later cancel shuts down no fd libcurl may have closed and reused
}

TEST_CASE("curl backend cancel: a transfer blocked reading a stalled server ends cancelled") {
    std::atomic<bool> stalled{false};
    FaultServer server([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        stalled = true;
        peer.stall();
    });
    CancelToken token;
    Options o = no_retry();
    o.backend = "curl";
    o.cancel = &token;
    o.read_timeout = 60s;
    std::thread canceller([&] {
        REQUIRE(wait_until([&] { return stalled.load(); }));
        token.cancel();
    });
    auto r = post(server.url(), "{}", {}, o);
    canceller.join();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::cancelled);
}
