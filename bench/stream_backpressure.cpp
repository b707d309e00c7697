// bench/stream_backpressure: a loopback firehose streams ~100 MiB of SSE to a
// fast and to a slow consumer; throughput and peak RSS (VmHWM, reset between
// runs) for `window`, `pull`, and `window` with no limit (the unbounded
// baseline). Then how promptly a stream handle is destroyed while connecting,
// reading and parked (p50/p99).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "nous/http/stream.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;
using Clock = std::chrono::steady_clock;

namespace {

struct Row {
    std::string backend, consumer;
    double seconds = 0, mib_s = 0, events_s = 0;
    long peak_rss_kb = 0;
    std::uint64_t parks = 0;
    std::size_t peak_inflight = 0;
};

Row run(const std::string& url, const std::string& label, Options o, double slow_mib_s) {
    nous::bench::reset_peak_rss();
    auto start = Clock::now();
    Stream s = stream(url, R"({"stream":true})", {}, o);
    std::uint64_t bytes = 0, events = 0;
    bool done = false;
    while (auto item = s.next()) {
        if (item->is_error()) {
            std::fprintf(stderr, "stream error: %s\n", item->error->message.c_str());
            std::exit(1);
        }
        if (item->is_done()) {
            done = true;
            break;
        }
        bytes += item->event.data.size();
        ++events;
        if (slow_mib_s > 0 && events % 256 == 0) {
            // Pace the consumer: it may not be ahead of bytes / rate.
            auto due = start + std::chrono::duration<double>(static_cast<double>(bytes) /
                                                             (slow_mib_s * 1048576.0));
            std::this_thread::sleep_until(due);
        }
    }
    if (!done) {
        std::fprintf(stderr, "stream ended without [DONE]\n");
        std::exit(1);
    }
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    auto st = s.stats();
    return Row{label,
               slow_mib_s > 0 ? "slow" : "fast",
               secs,
               static_cast<double>(st.bytes) / 1048576.0 / secs,
               static_cast<double>(events) / secs,
               nous::bench::peak_rss_kb(),
               st.parks,
               st.peak_inflight_bytes};
}

struct Blackhole {
    int fd = -1;
    std::vector<int> fillers;
    std::uint16_t port = 0;
    Blackhole() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(fd, 0);
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
        for (int i = 0; i < 4; ++i) {
            int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
            fillers.push_back(c);
        }
    }
    ~Blackhole() {
        for (int c : fillers) ::close(c);
        ::close(fd);
    }
};

void destroy_latency(const std::string& state, const std::function<Stream()>& make, int n) {
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
        std::optional<Stream> s(make());
        auto t0 = Clock::now();
        s.reset();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-12s %8d %10.3f %10.3f %10.3f\n", state.c_str(), n, ms[ms.size() / 2],
                ms[std::min(ms.size() - 1,
                            static_cast<std::size_t>(0.99 * static_cast<double>(ms.size())))],
                ms.back());
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t mib = 100;
    double slow = 50;  // MiB/s for the slow consumer
    std::string only_backend, only_consumer;
    bool destroy = true, header = true;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (k == "--mib")
            mib = std::stoull(value());
        else if (k == "--slow-mib-s")
            slow = std::stod(value());
        else if (k == "--backend")
            only_backend = value();  // one row per process: RSS is not
        else if (k == "--consumer")
            only_consumer = value();  // polluted by an earlier run
        else if (k == "--no-destroy")
            destroy = false;
        else if (k == "--no-header")
            header = false;
        else {
            std::fprintf(
                stderr,
                "usage: stream_backpressure [--mib N] [--slow-mib-s R] [--backend window|pull|"
                "window-unbounded] [--consumer fast|slow] [--no-destroy] [--no-header]\n");
            return 2;
        }
    }
    MockServerOptions mo;
    mo.firehose_bytes = mib << 20;
    MockServer server(mo);
    server.start();
    const std::string url = server.base_url() + "/sse100m";

    if (header) {
        std::printf(
            "# %llu MiB of OpenAI-style SSE chunks from the in-process mock server; slow consumer "
            "paced at "
            "%.0f MiB/s\n# peak_rss = VmHWM of the whole process (server included), reset before "
            "the run\n",
            static_cast<unsigned long long>(mib), slow);
        std::printf("%-16s %-8s %8s %9s %11s %12s %8s %14s\n", "backend", "consumer", "seconds",
                    "MiB/s", "events/s", "peak_rss_kb", "parks", "peak_inflight");
    }
    Options window;
    Options pull;
    pull.stream_backend = "pull";
    Options unbounded;
    unbounded.window_high_bytes = SIZE_MAX / 2;
    unbounded.window_low_bytes = SIZE_MAX / 4;
    for (double rate : {0.0, slow}) {
        if (!only_consumer.empty() && only_consumer != (rate > 0 ? "slow" : "fast")) continue;
        for (auto& [label, o] : std::vector<std::pair<std::string, Options>>{
                 {"window", window}, {"pull", pull}, {"window-unbounded", unbounded}}) {
            if (!only_backend.empty() && only_backend != label) continue;
            Row r = run(url, label, o, rate);
            std::printf("%-16s %-8s %8.2f %9.1f %11.0f %12ld %8llu %14zu\n", r.backend.c_str(),
                        r.consumer.c_str(), r.seconds, r.mib_s, r.events_s, r.peak_rss_kb,
                        static_cast<unsigned long long>(r.parks), r.peak_inflight);
            std::fflush(stdout);
        }
    }

    {
        // Parked streams: each reader holds its window full while its
        // consumer does not read; what the process spends meanwhile (the
        // in-process server's sends are blocked by TCP) is what a parked
        // stream costs to keep.
        constexpr int kParked = 200;
        constexpr auto kHeld = std::chrono::seconds(3);
        Options o;
        o.window_high_bytes = 64 << 10;
        o.window_low_bytes = 16 << 10;
        o.receive_buffer_bytes = 64 << 10;
        o.window_max_park = std::chrono::seconds(60);
        std::vector<Stream> parked;
        for (int i = 0; i < kParked; ++i) parked.push_back(stream(url, "{}", {}, o));
        for (auto& s : parked)
            while (s.stats().parks == 0) std::this_thread::yield();
        const double cpu_before = nous::bench::process_cpu_seconds();
        std::this_thread::sleep_for(kHeld);
        const double cpu = nous::bench::process_cpu_seconds() - cpu_before;
        std::printf("\n# %d window streams parked for %lld s: the process's CPU meanwhile\n",
                    kParked, static_cast<long long>(kHeld.count()));
        std::printf("parked_cpu_ms %.1f  us_per_stream_second %.2f\n", cpu * 1e3,
                    cpu * 1e6 / (kParked * static_cast<double>(kHeld.count())));
        std::fflush(stdout);
    }

    if (!destroy) return 0;
    std::printf("\n# destroying a stream handle (window backend), milliseconds\n");
    std::printf("%-12s %8s %10s %10s %10s\n", "state", "n", "p50_ms", "p99_ms", "max_ms");
    Blackhole blackhole;
    destroy_latency(
        "connecting",
        [&] {
            Options o;
            o.connect_timeout = std::chrono::seconds(60);
            return stream("http://127.0.0.1:" + std::to_string(blackhole.port) + "/", "{}", {}, o);
        },
        50);
    MockServerOptions slow_server;
    slow_server.first_token_latency = std::chrono::seconds(60);
    MockServer stalling(slow_server);
    stalling.start();
    destroy_latency(
        "reading",
        [&] {
            Stream s = stream(stalling.base_url() + "/v1/chat/completions", R"({"stream":true})");
            // Wait for the head so the reader is blocked in a body read.
            while (s.stats().status == 0) std::this_thread::yield();
            return s;
        },
        50);
    destroy_latency(
        "parked",
        [&] {
            Options o;
            o.window_high_bytes = 1 << 20;
            o.window_low_bytes = 256 << 10;
            Stream s = stream(url, "{}", {}, o);
            while (s.stats().parks == 0) std::this_thread::yield();
            return s;
        },
        50);
    return 0;
}
