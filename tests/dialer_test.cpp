// transport/dialer: Happy Eyeballs over the resolver seam, with addresses on
// loopback that accept, refuse, or drop SYNs.

#include "transport/dialer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <thread>

#include "fault_server.hpp"
#include "nous/http/client.hpp"
#include "sleeping_wait.hpp"
#include "transport/resolver.hpp"

using namespace nous::http;
using namespace nous::http::detail;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

ResolvedAddress v4(const char* ip, std::uint16_t port) {
    ResolvedAddress a;
    auto& in = reinterpret_cast<sockaddr_in&>(a.storage);
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &in.sin_addr);
    a.length = sizeof(sockaddr_in);
    return a;
}

ResolvedAddress v6(const char* ip, std::uint16_t port) {
    ResolvedAddress a;
    auto& in = reinterpret_cast<sockaddr_in6&>(a.storage);
    in.sin6_family = AF_INET6;
    in.sin6_port = htons(port);
    ::inet_pton(AF_INET6, ip, &in.sin6_addr);
    a.length = sizeof(sockaddr_in6);
    return a;
}

/// Installs the resolver seam for one test: "dual.test" resolves to what
/// `addresses()` says at that moment; every lookup is counted.
struct FakeNames {
    std::atomic<int> lookups{0};
    std::function<std::vector<ResolvedAddress>()> addresses;
    FakeNames() {
        clear_dns_cache();
        set_resolver_for_tests(
            [this](const std::string& host, std::uint16_t, std::vector<ResolvedAddress>& out) {
                ++lookups;
                if (host != "dual.test") return EAI_NONAME;
                out = addresses();
                return 0;
            });
    }
    ~FakeNames() {
        set_resolver_for_tests(nullptr);
        clear_dns_cache();
    }
};

FaultServer answering() {
    return FaultServer([](Peer& peer, std::uint64_t) {
        while (peer.read_request()) peer.send(ok_response("good"));
    });
}

Options patient() {
    Options o;
    o.max_retries = 0;
    o.connect_timeout = 120s;  // past the test's own timeout: the old dialer would wait it out
    return o;
}

}  // namespace

TEST_CASE("families are interleaved, starting with the resolver's first choice") {
    auto order =
        interleave_families({v6("::1", 1), v6("::1", 2), v6("::1", 3), v4("127.0.0.1", 4)});
    REQUIRE(order.size() == 4);
    CHECK(order[0].family() == AF_INET6);
    CHECK(order[1].family() == AF_INET);
    CHECK(order[2].family() == AF_INET6);
    CHECK(order[3].family() == AF_INET6);
    auto v4_first = interleave_families({v4("127.0.0.1", 1), v6("::1", 2), v4("127.0.0.1", 3)});
    CHECK(v4_first[0].family() == AF_INET);
    CHECK(v4_first[1].family() == AF_INET6);
    CHECK(v4_first[2].family() == AF_INET);
}

TEST_CASE(
    "regression: an address that drops SYNs ate the whole connect budget, [dead, good] connects") {
    BlackholeListener dead;
    auto good = answering();
    FakeNames names;
    names.addresses = [&] {
        return std::vector{v4("127.0.0.1", dead.port()), v4("127.0.0.1", good.port())};
    };
    auto r = post("http://dual.test:" + std::to_string(good.port()) + "/", "{}", {}, patient());
    INFO((r.ok() ? std::string("ok") : r.error().message));
    REQUIRE(r.ok());
    CHECK(r->body == "good");
    CHECK(good.connections() == 1);
}

TEST_CASE("a refused address starts the next attempt at once") {
    auto good = answering();
    FakeNames names;
    const std::uint16_t refused = unused_loopback_port();
    names.addresses = [&] {
        return std::vector{v4("127.0.0.1", refused), v4("127.0.0.1", good.port())};
    };
    auto r = post("http://dual.test:" + std::to_string(good.port()) + "/", "{}", {}, patient());
    REQUIRE(r.ok());
    CHECK(r->body == "good");
}

TEST_CASE(
    "every address refused is connect_failed naming each, every address silent is "
    "timeout_connect") {
    FakeNames names;
    const std::uint16_t a = unused_loopback_port(), b = unused_loopback_port();
    names.addresses = [&] { return std::vector{v4("127.0.0.1", a), v4("127.0.0.1", b)}; };
    Options o = patient();
    auto refused = post("http://dual.test:80/", "{}", {}, o);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::connect_failed);
    CHECK(refused.error().message.find("127.0.0.1") != std::string::npos);

    BlackholeListener dead1, dead2;
    names.addresses = [&] {
        return std::vector{v4("127.0.0.1", dead1.port()), v4("127.0.0.1", dead2.port())};
    };
    clear_dns_cache();
    o.connect_timeout = 600ms;
    auto silent = post("http://dual.test:80/", "{}", {}, o);
    REQUIRE_FALSE(silent.ok());
    CHECK(silent.error().code == ErrorCode::timeout_connect);
}

TEST_CASE(
    "regression: a name whose every cached address failed was kept for 60 s, it is resolved "
    "afresh") {
    BlackholeListener dead;
    auto good = answering();
    FakeNames names;
    std::atomic<bool> repaired{false};
    names.addresses = [&] {
        return repaired ? std::vector{v4("127.0.0.1", good.port())}
                        : std::vector{v4("127.0.0.1", dead.port())};
    };
    Options o = patient();
    o.connect_timeout = 300ms;
    const std::string url = "http://dual.test:" + std::to_string(good.port()) + "/";
    auto first = post(url, "{}", {}, o);
    REQUIRE_FALSE(first.ok());
    CHECK(first.error().code == ErrorCode::timeout_connect);
    CHECK(names.lookups == 1);
    repaired = true;  // DNS now points at the live member
    auto second = post(url, "{}", {}, o);
    CHECK(names.lookups == 2);
    REQUIRE(second.ok());
    CHECK(second->body == "good");
    // A name that connected stays cached.
    REQUIRE(post(url, "{}", {}, o).ok());
    CHECK(names.lookups == 2);
}

TEST_CASE("a cancel ends a dial with attempts in flight") {
    BlackholeListener dead1, dead2;
    FakeNames names;
    names.addresses = [&] {
        return std::vector{v4("127.0.0.1", dead1.port()), v4("127.0.0.1", dead2.port())};
    };
    CancelToken token;
    Options o = patient();
    o.cancel = &token;
    std::optional<Result<Response>> result;
    std::thread caller([&] { result.emplace(post("http://dual.test:80/", "{}", {}, o)); });
    REQUIRE(wait_until([&] { return names.lookups.load() == 1; }));
    token.cancel();
    caller.join();
    REQUIRE(result);
    REQUIRE_FALSE(result->ok());
    CHECK(result->error().code == ErrorCode::cancelled);
}

TEST_CASE("IP literals resolve without a lookup, in every numeric form getaddrinfo takes") {
    FakeNames names;  // a lookup of any name would be counted (and fail)
    const Deadlines no_deadlines{};
    auto same = [](const ResolvedAddress& a, const ResolvedAddress& b) {
        return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
    };
    auto one = [&](const char* host, std::uint16_t port) {
        auto r = resolve(host, port, no_deadlines, nullptr);
        REQUIRE(r);
        REQUIRE(r->size() == 1);
        return r->front();
    };
    CHECK(same(one("127.0.0.1", 8080), v4("127.0.0.1", 8080)));
    CHECK(same(one("::1", 443), v6("::1", 443)));
    CHECK(same(one("2001:db8::7", 1), v6("2001:db8::7", 1)));
    // inet_aton's short and hex forms are numeric too (getaddrinfo's own path).
    CHECK(same(one("127.1", 80), v4("127.0.0.1", 80)));
    CHECK(same(one("0x7f.0.0.1", 80), v4("127.0.0.1", 80)));
    CHECK(names.lookups == 0);
    // A name is looked up, however much it looks like hex ("cafe.be").
    CHECK_FALSE(resolve("cafe.be", 80, no_deadlines, nullptr));
    CHECK(names.lookups == 1);
}

TEST_CASE("a caller waiting for a name lookup sleeps without slices and a cancel ends the wait") {
    // A lookup that hangs until the test lets it go: its detached thread
    // keeps the release flag alive after the test.
    auto release = std::make_shared<std::atomic<bool>>(false);
    clear_dns_cache();
    set_resolver_for_tests(
        [release](const std::string&, std::uint16_t, std::vector<ResolvedAddress>&) {
            while (!release->load()) release->wait(false);
            return EAI_NONAME;
        });
    const SleepingWait seen = cancel_while_asleep([](const CancelToken& token) {
        Options o = patient();  // only the cancel ends this wait
        o.cancel = &token;
        auto r = post("http://slow.test:8080/", "{}", {}, o);
        return !r.ok() && r.error().code == ErrorCode::cancelled;
    });
    release->store(true);
    release->notify_all();
    set_resolver_for_tests(nullptr);
    clear_dns_cache();
    CHECK(seen.asleep);
    CHECK(seen.sleeps <= 2);
    CHECK_FALSE(seen.woke_early);
    CHECK(seen.ended);
    CHECK(seen.cancelled);
}
