// bench/router: what a Router costs a call (docs/BENCHMARKS.md, "Router").
//
//   router [--seconds S] [--redis redis://127.0.0.1:PORT/0]
//     bookkeeping: choosing, reserving and settling alone (RouterAccess::
//       route_once), two deployments with rpm/tpm budgets, local state and,
//       with --redis, shared in Redis, back to back and with 1 ms between
//       calls (as a real call's own time spaces them; the gap not counted);
//       beside it one PING round trip to the same Redis (the floor of one);
//     calls: calls per second through a one-deployment router to an
//       in-process mock against run_chat to the same mock directly, at 1 and
//       64 threads, the two alternating for S seconds each, N rounds (3),
//       and the median of the rounds' ratios; and a third run through the
//       same router with an OtlpExporter as its observer, sending every
//       call's span and the metrics to a sink in a child process (export
//       against none).
// Prints a table.

#include "nous/llm/router.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "mock_child.hpp"
#include "nous/llm/detail/router_access.hpp"
#include "nous/llm/otlp.hpp"
#include "nous/llm/run_chat.hpp"
#include "nous/mock/mock_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

nous::llm::Deployment deployment(const std::string& name, const std::string& base) {
    nous::llm::Deployment d;
    d.name = name;
    d.base_url = base;
    d.api_key = "sk-bench";
    d.model = "mock-1";
    return d;
}

std::unique_ptr<nous::llm::Router> make_router(nous::llm::RouterConfig config) {
    auto r = nous::llm::Router::create(std::move(config));
    if (!r) {
        std::fprintf(stderr, "router: %s\n", r.error().message.c_str());
        std::exit(1);
    }
    return std::move(r.value());
}

/// ns per route_once over `n` calls.
double bookkeeping_ns(nous::llm::Router& router, int n) {
    for (int i = 0; i < n / 10; ++i) nous::llm::detail::RouterAccess::route_once(router, 10);
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i)
        if (!nous::llm::detail::RouterAccess::route_once(router, 10)) {
            std::fprintf(stderr, "router: no deployment took a call\n");
            std::exit(1);
        }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
}

/// ns per route_once over `n` calls with `gap` between them, the gap not
/// counted: what a call pays when it does not follow the previous one at once
/// (a settle's answer, read by the next user of its connection, has arrived).
double spaced_bookkeeping_ns(nous::llm::Router& router, int n, std::chrono::microseconds gap) {
    double ns = 0;
    for (int i = 0; i < n; ++i) {
        std::this_thread::sleep_for(gap);
        const auto t0 = Clock::now();
        if (!nous::llm::detail::RouterAccess::route_once(router, 10)) std::exit(1);
        ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    }
    return ns / n;
}

/// One PING's round trip to Redis at host:port over one connection, median of `n`, in us.
double redis_ping_us(const std::string& url, int n, std::chrono::microseconds gap = {}) {
    const std::string rest = url.substr(std::strlen("redis://"));
    const std::string host = rest.substr(0, rest.find(':'));
    const int port = std::stoi(rest.substr(rest.find(':') + 1));
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        std::fprintf(stderr, "router: cannot reach %s\n", url.c_str());
        std::exit(1);
    }
    std::vector<double> us;
    char buffer[64];
    for (int i = 0; i < n; ++i) {
        if (gap.count() > 0) std::this_thread::sleep_for(gap);
        const auto t0 = Clock::now();
        if (::send(fd, "PING\r\n", 6, 0) != 6 || ::recv(fd, buffer, sizeof buffer, 0) <= 0) break;
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    ::close(fd);
    std::sort(us.begin(), us.end());
    return us.empty() ? 0 : us[us.size() / 2];
}

/// What `call` achieved on `threads` threads for `seconds`: calls per
/// second, and the process's CPU per call (us), the steadier of the two on
/// an oversubscribed machine.
struct Rate {
    double per_second = 0, cpu_us = 0;
};

template <typename Call>
Rate calls_per_second(int threads, double seconds, Call&& call) {
    std::atomic<bool> stop{false};
    std::atomic<long> done{0};
    std::vector<std::thread> workers;
    const double cpu0 = nous::bench::process_cpu_seconds();
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed))
                if (call()) done.fetch_add(1, std::memory_order_relaxed);
        });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& w : workers) w.join();
    const double calls = static_cast<double>(std::max(1L, done.load()));
    return {calls / std::chrono::duration<double>(Clock::now() - t0).count(),
            (nous::bench::process_cpu_seconds() - cpu0) * 1e6 / calls};
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 2;
    int rounds = 3;
    std::string redis;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc) {
            seconds = std::stod(argv[++i]);
        } else if (arg == "--rounds" && i + 1 < argc) {
            rounds = std::stoi(argv[++i]);
        } else if (arg == "--redis" && i + 1 < argc) {
            redis = argv[++i];
        } else {
            std::fprintf(
                stderr,
                "usage: router [--seconds S] [--rounds N] [--redis redis://HOST:PORT/DB]\n");
            return 2;
        }
    }
    // Forked before any thread of ours exists.
    const std::string collector = nous::bench::mock_in_child().url;
    nous::http::MockServer mock;
    mock.start();
    const std::string base = mock.base_url() + "/v1";

    std::printf("%-44s %12s\n", "bookkeeping per call (choose, reserve, settle)", "per call");
    nous::llm::RouterConfig local;
    local.deployments = {deployment("a", base), deployment("b", base)};
    for (auto& d : local.deployments) {
        d.rpm = 1'000'000'000;
        d.tpm = 1'000'000'000'000;
    }
    auto local_router = make_router(local);
    std::printf("%-44s %9.0f ns\n", "local state", bookkeeping_ns(*local_router, 1'000'000));
    if (!redis.empty()) {
        nous::llm::RouterConfig shared = local;
        shared.shared_state = redis;
        auto shared_router = make_router(shared);
        std::printf("%-44s %9.1f us\n", "shared in Redis, calls back to back",
                    bookkeeping_ns(*shared_router, 20'000) / 1000);
        std::printf(
            "%-44s %9.1f us\n", "shared in Redis, 1 ms between calls",
            spaced_bookkeeping_ns(*shared_router, 2'000, std::chrono::milliseconds(1)) / 1000);
        std::printf("%-44s %9.1f us\n", "one Redis PING round trip, back to back",
                    redis_ping_us(redis, 20'000));
        std::printf("%-44s %9.1f us\n", "one Redis PING round trip, 1 ms between",
                    redis_ping_us(redis, 2'000, std::chrono::milliseconds(1)));
    }

    nous::llm::ChatRequest request;
    request.base_url = base;
    request.api_key = "sk-bench";
    request.model = "mock-1";
    request.stream = false;
    request.messages = {nous::llm::ChatMessage::user("hello")};
    nous::llm::RouterConfig one;
    one.deployments = {deployment("a", base)};
    auto router = make_router(one);
    nous::http::Options options;
    options.max_retries = 0;
    // The same router, every call exported to a sink in another process (a
    // mock's /small: it reads each request whole and answers 200 without
    // parsing it): on two cores, a collector's own parsing would be taken
    // from the calls, and it is not the client's cost.
    nous::llm::OtlpSettings otlp;
    otlp.traces_endpoint = collector + "/small";
    otlp.metrics_endpoint = collector + "/small";
    otlp.metric_export_interval = std::chrono::seconds(1);
    auto exporter = nous::llm::OtlpExporter::start(otlp);
    if (!exporter) return 1;
    nous::llm::RouterConfig exported = one;
    exported.observer = exporter.value();
    auto exported_router = make_router(exported);
    std::printf("\n%-8s %-6s %10s %10s %9s %10s %9s   %s\n", "threads", "round", "direct/s",
                "router/s", "x direct", "+otlp/s", "x router", "CPU us/call: direct router +otlp");
    for (int threads : {1, 64}) {
        std::vector<double> ratios, otlp_ratios, cpu_ratios;
        for (int round = 1; round <= rounds; ++round) {
            const Rate direct = calls_per_second(
                threads, seconds, [&] { return bool(nous::llm::run_chat(request, options)); });
            const Rate routed = calls_per_second(
                threads, seconds, [&] { return bool(router->chat(request, options)); });
            const Rate with_otlp = calls_per_second(
                threads, seconds, [&] { return bool(exported_router->chat(request, options)); });
            std::printf("%-8d %-6d %10.0f %10.0f %9.3f %10.0f %9.3f   %6.1f %6.1f %6.1f\n", threads,
                        round, direct.per_second, routed.per_second,
                        routed.per_second / direct.per_second, with_otlp.per_second,
                        with_otlp.per_second / routed.per_second, direct.cpu_us, routed.cpu_us,
                        with_otlp.cpu_us);
            ratios.push_back(routed.per_second / direct.per_second);
            otlp_ratios.push_back(with_otlp.per_second / routed.per_second);
            cpu_ratios.push_back(with_otlp.cpu_us / routed.cpu_us);
        }
        for (auto* v : {&ratios, &otlp_ratios, &cpu_ratios}) std::sort(v->begin(), v->end());
        std::printf("%-8d median %21s %9.3f %10s %9.3f   +otlp CPU per call x%.3f\n", threads, "",
                    ratios[ratios.size() / 2], "", otlp_ratios[otlp_ratios.size() / 2],
                    cpu_ratios[cpu_ratios.size() / 2]);
    }
    // A long conversation: what copying it costs beside the call itself. The
    // router copies a const request once a call (each attempt sets its
    // deployment's fields on that copy) and a given-up one not at all.
    nous::llm::ChatRequest long_request = request;
    long_request.messages.clear();
    for (int i = 0; i < 100; ++i)
        long_request.messages.push_back(
            i % 2 ? nous::llm::ChatMessage::assistant(std::string(400, 'a'))
                  : nous::llm::ChatMessage::user("question " + std::to_string(i) + ": " +
                                                 std::string(300, 'q')));
    constexpr int kCopies = 20'000;
    std::size_t sink = 0;
    const auto c0 = Clock::now();
    for (int i = 0; i < kCopies; ++i) {
        nous::llm::ChatRequest copy = long_request;
        sink += copy.messages.size();
    }
    const double copy_us =
        std::chrono::duration<double, std::micro>(Clock::now() - c0).count() / kCopies;
    std::size_t text_bytes = 0;
    for (const auto& m : long_request.messages) text_bytes += m.content.size();
    std::printf("\n100-message conversation (%zu bytes of text), 1 thread\n", text_bytes);
    std::printf("%-44s %9.2f us%s\n", "one copy of the request", copy_us, sink ? "" : " ");
    for (int round = 1; round <= rounds; ++round) {
        const Rate direct = calls_per_second(
            1, seconds, [&] { return bool(nous::llm::run_chat(long_request, options)); });
        const Rate routed_const =
            calls_per_second(1, seconds, [&] { return bool(router->chat(long_request, options)); });
        std::printf(
            "round %d: direct %.0f/s %.1f us CPU, router (const request) %.0f/s %.1f us CPU\n",
            round, direct.per_second, direct.cpu_us, routed_const.per_second, routed_const.cpu_us);
    }
    exporter.value()->shutdown();
    const auto stats = exporter.value()->stats();
    std::printf("\notlp: %llu spans exported, %llu dropped (queue full), %llu failed\n",
                static_cast<unsigned long long>(stats.spans_exported),
                static_cast<unsigned long long>(stats.spans_dropped),
                static_cast<unsigned long long>(stats.spans_failed));
    return 0;
}
