// bench/http_backend: the localhost scenarios of Nous's published HTTP
// benchmark (Nous: an Elixir agent framework whose HTTP layer this library
// mirrors; small posts, 50 in parallel, large bodies, an SSE firehose) against the
// in-process mock server (default: a Benchee-like table for every client and
// scenario), or against any server with --url-base (one JSON line per run).
//
// Clients: nous-pooled (the library), and references written as a careful
// user would: ref-poco (HTTP/1.1 keep-alive, one session per thread, bulk
// reads), ref-curl (one reused easy handle per thread, TCP_NODELAY on), and
// ref-raw, the limit: a raw keep-alive socket, one sendmsg per request, recv
// into a 64 KiB buffer, events split with memchr.
//
// Each client is its own file in bench/clients/ behind bench::Client.
//
// Checks cost no more than a peer's: status, exact length, memcmp against the
// first response (streams: event count and data bytes). Allocations are
// counted (global operator new) and reported per iteration.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "clients/client.hpp"
#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "nous/http/testing.hpp"
#include "nous/mock/mock_server.hpp"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

namespace {

using namespace bench;

// ---- scenarios ----

struct Scenario {
    std::string name;
    int concurrency;  ///< requests in flight per iteration (worker threads)
    int sequential;   ///< requests per worker per iteration
    std::string path;
    std::size_t request_bytes;
    bool streamed = false;  ///< through the stream API (stream clients only)
};

const std::vector<Scenario>& scenarios() {
    static const std::vector<Scenario> all = {
        {"small_post", 1, 1, "/small", 1024},
        {"parallel_50", 50, 1, "/small", 1024},
        {"large_body", 10, 1, "/large", 256 * 1024},
        {"large_seq", 1, 10, "/large", 1024},
        {"sse_firehose", 1, 1, "/sse100m", 64, true},
        // The same volume in 49-byte events: the per-event path at its worst.
        {"sse_small", 1, 1, "/sse49", 64, true},
        {"chunked_1m", 1, 1, "/chunked1m", 1024},  // own servers only: 1,000 chunks of 1,000 bytes
        // One response of 1, 32 or 128 MiB with a Content-Length (own servers only): the body
        // path at memory speed, where a fresh buffer's page faults show.
        {"body_1m", 1, 1, "/body/1", 1024},
        {"body_32m", 1, 1, "/body/32", 1024},
        {"body_128m", 1, 1, "/body/128", 1024},
    };
    return all;
}

std::string request_body(std::size_t bytes) {
    // {"hello": "aaaa..."} of exactly `bytes` bytes.
    std::string head = R"({"hello":")", tail = R"("})";
    return head + std::string(bytes - head.size() - tail.size(), 'a') + tail;
}

struct Stats {
    std::vector<double> ms;  ///< per-iteration durations
    double seconds = 0;
    long peak_rss_kb = 0;
    double bytes_per_iteration = 0, events_per_iteration = 0;  ///< streamed scenarios
    double allocated_per_iteration = 0;  ///< bytes allocated (operator new), process-wide
    double ips() const { return ms.empty() ? 0 : static_cast<double>(ms.size()) / seconds; }
    double pct(double p) const {
        if (ms.empty()) return 0;
        std::vector<double> s = ms;
        std::sort(s.begin(), s.end());
        std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size()))) - 1;
        return s[std::min(i, s.size() - 1)];
    }
    double mean() const {
        return std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    }
    double deviation_pct() const {
        double m = mean(), v = 0;
        for (double x : ms) v += (x - m) * (x - m);
        return ms.size() > 1 ? 100.0 * std::sqrt(v / static_cast<double>(ms.size() - 1)) / m : 0;
    }
};

Stats run(const std::string& client_name, const Scenario& sc, const std::string& base, bool nodelay,
          double warmup_s, double seconds) {
    const std::string url = base + sc.path;
    const std::string body = request_body(sc.request_bytes);
    // The expected answer: one probe request with a fresh client.
    std::string probe;
    Expect expect;
    {
        auto c = make_client(client_name, nodelay);
        int status = c->post(url, body, probe);
        if (status != 200) abort_run("probe status " + std::to_string(status));
        expect = {probe};
    }
    Stats stats;
    if (sc.streamed) {
        // probe = "<events> events, <bytes> bytes": only the stream clients decode events.
        if (probe.find(" events, ") == std::string::npos)
            abort_run(client_name + " has no stream parser: " + sc.name +
                      " takes nous-window, nous-pull or ref-raw-events");
        stats.events_per_iteration = std::stod(probe);
        stats.bytes_per_iteration = std::stod(probe.substr(probe.find(", ") + 2));
    } else if (sc.path.starts_with("/body/")) {
        stats.bytes_per_iteration = static_cast<double>(probe.size());
    }
    const int workers = sc.concurrency;
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < workers; ++i) clients.push_back(make_client(client_name, nodelay));

    std::atomic<bool> stop{false};
    std::barrier start(workers + 1), done(workers + 1);
    std::vector<std::thread> threads;
    auto one_iteration = [&](int w) {
        std::string out;
        for (int k = 0; k < sc.sequential; ++k)
            check(clients[w]->post(url, body, out), out, expect);
    };
    if (workers > 1) {
        // Persistent workers released by a barrier: thread creation is not measured.
        for (int w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                for (;;) {
                    start.arrive_and_wait();
                    if (stop) return;
                    one_iteration(w);
                    done.arrive_and_wait();
                }
            });
    }
    auto iterate = [&] {
        if (workers == 1) {
            one_iteration(0);
        } else {
            start.arrive_and_wait();
            done.arrive_and_wait();
        }
    };
    auto warm_until = Clock::now() + std::chrono::duration<double>(warmup_s);
    while (Clock::now() < warm_until) iterate();
    nous::bench::reset_peak_rss();
    const std::uint64_t allocated_before = nous::bench::allocated_bytes();
    auto t0 = Clock::now();
    auto until = t0 + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        auto s = Clock::now();
        iterate();
        stats.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    }
    stats.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    stats.peak_rss_kb = nous::bench::peak_rss_kb();
    if (!stats.ms.empty())
        stats.allocated_per_iteration =
            static_cast<double>(nous::bench::allocated_bytes() - allocated_before) /
            static_cast<double>(stats.ms.size());
    if (workers > 1) {
        stop = true;
        start.arrive_and_wait();
        for (auto& t : threads) t.join();
    }
    return stats;
}

void print_json(const std::string& client, const std::string& scenario, const Stats& s) {
    std::printf(
        "{\"client\":\"%s\",\"scenario\":\"%s\",\"ips\":%.1f,\"median_ms\":%.4f,\"p99_ms\":%.4f,"
        "\"n\":%zu,"
        "\"alloc_bytes\":%.0f",
        client.c_str(), scenario.c_str(), s.ips(), s.pct(0.5), s.pct(0.99), s.ms.size(),
        s.allocated_per_iteration);
    if (s.bytes_per_iteration > 0)
        std::printf(",\"mib_s\":%.1f,\"events_s\":%.0f,\"peak_rss_kb\":%ld",
                    s.ips() * s.bytes_per_iteration / 1048576.0, s.ips() * s.events_per_iteration,
                    s.peak_rss_kb);
    std::printf("}\n");
    std::fflush(stdout);
}

void print_row(const std::string& client, const std::string& scenario, const Stats& s) {
    std::printf("%-13s %-13s %10.1f %9.4f %7.1f%% %9.4f %9.4f %9.4f %9.4f %8zu %9ld %11.0f\n",
                client.c_str(), scenario.c_str(), s.ips(), s.mean(), s.deviation_pct(), s.pct(0.5),
                s.pct(0.99), *std::min_element(s.ms.begin(), s.ms.end()),
                *std::max_element(s.ms.begin(), s.ms.end()), s.ms.size(), s.peak_rss_kb,
                s.allocated_per_iteration);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::string url_base, scenario, backend = "pooled", client, stream_backend;
    double seconds = 10, warmup = 2;
    int nodelay = 1;
    po::options_description desc("http_backend [options]");
    desc.add_options()("help,h", "help")("url-base", po::value(&url_base),
                                         "run against this server; prints one JSON line")(
        "scenario", po::value(&scenario),
        "small_post|parallel_50|large_body|large_seq|sse_firehose|sse_small|chunked_1m|body_1m|"
        "body_32m|body_128m|nagle "
        "(default: "
        "all)")("seconds", po::value(&seconds), "measurement time per run (default 10)")(
        "warmup", po::value(&warmup), "warm-up time per run (default 2)")(
        "nodelay", po::value(&nodelay), "TCP_NODELAY on the client: 1 or 0")(
        "backend", po::value(&backend), "nous post backend: pooled|curl")(
        "stream-backend", po::value(&stream_backend), "nous stream backend (streaming scenarios)")(
        "cacert", po::value(&g_tls.cacert), "https: trust this CA (PEM) besides the system store")(
        "new-connection",
        "every iteration opens a fresh connection (cold TCP + TLS; sessions resumed)")(
        "no-resume",
        "with a fresh connection per iteration, no TLS session is offered: a full handshake each "
        "time")("client", po::value(&client),
                "nous-pooled|nous-curl|nous-window|nous-pull|ref-poco|ref-curl|ref-raw|ref-raw-"
                "events|ref-openssl|ref-beast "
                "(default: nous-<backend>)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "http_backend: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    g_tls.new_connection = vm.count("new-connection") > 0 || vm.count("no-resume") > 0;
    g_tls.no_resume = vm.count("no-resume") > 0;
    init_clients();
    if (!url_base.empty()) {
        if (client.empty())
            client =
                scenario == "sse_firehose" || scenario == "sse_small"
                    ? "nous-" + (stream_backend.empty() ? std::string("window") : stream_backend)
                    : "nous-" + backend;
        for (const auto& sc : scenarios())
            if (sc.name == scenario) {
                print_json(client, sc.name,
                           run(client, sc, url_base, nodelay != 0, warmup, seconds));
                return 0;
            }
        std::cerr << "http_backend: --url-base needs --scenario "
                     "small_post|parallel_50|large_body|large_seq|sse_firehose|"
                     "sse_small|chunked_1m\n";
        return 2;
    }

    std::vector<std::string> clients = {"nous-pooled"};
#ifdef NOUS_HAVE_CURL
    clients.push_back("nous-curl");
#endif
    clients.push_back("ref-poco");
    clients.push_back("ref-raw");
#ifdef NOUS_BENCH_HAVE_CURL
    clients.push_back("ref-curl");
#endif
    if (!client.empty()) clients = {client};
    nous::http::MockServer server;
    server.start();
    std::printf(
        "# in-process mock server, warm-up %.1f s, measurement %.1f s per row; rss_kb = peak RSS "
        "of the "
        "whole process (KiB); alloc_bytes = bytes allocated per iteration (process-wide)\n",
        warmup, seconds);
    std::printf("%-13s %-13s %10s %9s %8s %9s %9s %9s %9s %8s %9s %11s\n", "client", "scenario",
                "ips", "avg_ms", "dev", "median_ms", "p99_ms", "min_ms", "max_ms", "n", "rss_kb",
                "alloc_bytes");
    for (const auto& sc : scenarios()) {
        if (!scenario.empty() && scenario != sc.name) continue;
        if (sc.streamed) {
            // The stream API only: every event decoded. The reference clients have no stream
            // parser.
            for (const char* c : {"nous-window", "nous-pull", "ref-raw-events"}) {
                if (!client.empty() && client != c) continue;
                Stats st = run(c, sc, server.base_url(), nodelay != 0, warmup, seconds);
                print_row(c, sc.name, st);
                std::printf("%-13s %-13s   %.1f MiB/s, %.0f events/s\n", "", "",
                            st.ips() * st.bytes_per_iteration / 1048576.0,
                            st.ips() * st.events_per_iteration);
            }
            continue;
        }
        for (const auto& c : clients) {
            Stats st = run(c, sc, server.base_url(), nodelay != 0, warmup, seconds);
            print_row(c, sc.name, st);
            if (st.bytes_per_iteration > 0)
                std::printf("%-13s %-13s   %.0f MB/s\n", "", "",
                            st.ips() * st.bytes_per_iteration / 1e6);
        }
    }
    if (scenario.empty() || scenario == "nagle") {
        // The two Nagle cases of that benchmark: (a) client with TCP_NODELAY off against a normal
        // server, (b) a server that writes head and body apart with Nagle on.
        nous::http::MockServerOptions o;
        o.nagle = true;
        nous::http::MockServer nagle_server(o);
        nagle_server.start();
        const Scenario& small = scenarios()[0];
        for (const auto& c : clients) {
            print_row(c, "nagle_client", run(c, small, server.base_url(), false, warmup, seconds));
            print_row(c, "nagle_server",
                      run(c, small, nagle_server.base_url(), true, warmup, seconds));
        }
    }
    return 0;
}
