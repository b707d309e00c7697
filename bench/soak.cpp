// bench/soak: many small posts and many streams cancelled or dropped at
// random points, against the in-process mock server or any server
// (--url-base); RSS, open fds and threads at the start (after a warm-up) and
// at the end. Flat means the library leaks nothing per call. Also
// --concurrent N: N streams to one origin held open at once, each must
// deliver its first event; prints the RSS each one costs.
//
//   soak [--url-base URL] --posts N --streams M [--threads T] [--seed S]
//        [--post-path /small] [--stream-path /v1/chat/completions]
//   soak [--url-base URL] --concurrent N [--stream-backend window|pull] [--tokens-per-second R]
//
// One JSON line:
//   {"posts":N,"streams":M,"cancelled":..,"errors":..,"rss_kb_start":..,"rss_kb_end":..,
//    "fds_start":..,"fds_end":..,"threads_end":..}

#include <dirent.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "nous/mock/mock_server.hpp"

namespace po = boost::program_options;
using namespace nous::http;

namespace {

long status_field(const char* name) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string key = std::string(name) + ":";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
    return 0;
}

long open_fds() {
    long n = 0;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        while (dirent* e = ::readdir(dir))
            if (e->d_name[0] != '.') ++n;
        ::closedir(dir);
        --n;  // the directory's own fd
    }
    return n;
}

struct Totals {
    std::atomic<std::uint64_t> posts{0}, streams{0}, cancelled{0}, errors{0};
};

/// One stream, ended at a random point: dropped before the first item, cancelled
/// or dropped after k events, or read to its end.
void one_stream(const std::string& url, const std::string& body, const Options& options,
                std::mt19937_64& rng, Totals& totals) {
    const int how = static_cast<int>(rng() % 4);
    const int after = static_cast<int>(rng() % 8);
    Stream s = stream(url, body, {}, options);
    if (how == 0) {  // dropped at once: the destructor cancels it
        ++totals.cancelled;
        return;
    }
    int events = 0;
    while (auto item = s.next()) {
        if (item->is_error()) {
            if (item->error->code != ErrorCode::cancelled) ++totals.errors;
            return;
        }
        if (item->is_done()) return;
        if (++events == after && how != 3) {
            if (how == 1) s.cancel();  // cancelled: the next item is `cancelled`
            ++totals.cancelled;
            if (how == 2) return;  // dropped mid-stream
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string url_base, post_path = "/small", stream_path = "/v1/chat/completions",
                          stream_backend;
    std::uint64_t posts = 10000, streams = 1000, seed = 42;
    int threads = 2, concurrent = 0, tokens_per_second = 0;
    po::options_description desc("soak");
    desc.add_options()("help,h", "help")("url-base", po::value(&url_base),
                                         "server (default: in-process mock)")(
        "posts", po::value(&posts), "small posts in total")("streams", po::value(&streams),
                                                            "streams in total")(
        "threads", po::value(&threads), "worker threads")("seed", po::value(&seed),
                                                          "randomness of the end points")(
        "post-path", po::value(&post_path), "path of the small post")(
        "stream-path", po::value(&stream_path), "path of the stream")(
        "concurrent", po::value(&concurrent), "N streams held open at once (first event each)")(
        "stream-backend", po::value(&stream_backend), "window or pull")(
        "tokens-per-second", po::value(&tokens_per_second),
        "in-process mock: pace the streamed tokens (holds --concurrent streams open)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << e.what() << "\n" << desc << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    std::unique_ptr<MockServer> mock;
    if (url_base.empty()) {
        MockServerOptions o;
        o.stream_tokens = 16;
        o.tokens_per_second = tokens_per_second;
        mock = std::make_unique<MockServer>(o);
        mock->start();
        url_base = mock->base_url();
    }
    const std::string stream_body = R"({"model":"m","stream":true,"messages":[]})";
    Options options;
    options.max_retries = 0;
    options.stream_backend = stream_backend;

    if (concurrent > 0) {
        const long rss_before = status_field("VmRSS");
        std::vector<Stream> open;
        open.reserve(static_cast<std::size_t>(concurrent));
        int firsts = 0, failures = 0;
        for (int i = 0; i < concurrent; ++i)
            open.push_back(stream(url_base + stream_path, stream_body, {}, options));
        for (auto& s : open) {
            auto item = s.next();
            if (item && item->is_event())
                ++firsts;
            else
                ++failures;
        }
        const long rss_open = status_field("VmRSS");
        std::printf(
            "{\"concurrent\":%d,\"first_events\":%d,\"failures\":%d,\"rss_kb_before\":%ld,\"rss_kb_"
            "open\":%ld,"
            "\"rss_kb_per_stream\":%.1f,\"threads_open\":%ld}\n",
            concurrent, firsts, failures, rss_before, rss_open,
            static_cast<double>(rss_open - rss_before) / concurrent, status_field("Threads"));
        return firsts == concurrent ? 0 : 1;
    }

    Totals totals;
    auto worker = [&](int index, std::uint64_t my_posts, std::uint64_t my_streams) {
        std::mt19937_64 rng(seed + static_cast<std::uint64_t>(index));
        // Interleave: a stream every posts/streams posts.
        const std::uint64_t every =
            my_streams ? std::max<std::uint64_t>(1, my_posts / my_streams) : 0;
        std::uint64_t streams_done = 0;
        for (std::uint64_t i = 0; i < my_posts || streams_done < my_streams; ++i) {
            if (i < my_posts) {
                auto r = post(url_base + post_path, R"({"hello":"soak"})", {}, options);
                if (!r.ok()) ++totals.errors;
                ++totals.posts;
            }
            if (streams_done < my_streams && (every == 0 || i % every == 0 || i >= my_posts)) {
                one_stream(url_base + stream_path, stream_body, options, rng, totals);
                ++totals.streams;
                ++streams_done;
            }
        }
    };
    auto run = [&](std::uint64_t n_posts, std::uint64_t n_streams) {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(worker, t, n_posts / threads + (t == 0 ? n_posts % threads : 0),
                              n_streams / threads + (t == 0 ? n_streams % threads : 0));
        for (auto& t : pool) t.join();
    };
    // Warm-up: pools, TLS contexts, allocator arenas and thread stacks exist afterwards.
    run(std::max<std::uint64_t>(posts / 100, 100), std::max<std::uint64_t>(streams / 100, 10));
    totals.posts = 0;
    totals.streams = 0;
    totals.cancelled = 0;
    totals.errors = 0;
    const long rss_start = status_field("VmRSS");
    const long fds_start = open_fds();
    const auto started = std::chrono::steady_clock::now();
    run(posts, streams);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // Streams' reader threads finish as their handles drop; give the joins a moment.
    for (int i = 0; i < 100 && live_streams() != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::printf(
        "{\"posts\":%llu,\"streams\":%llu,\"cancelled\":%llu,\"errors\":%llu,\"rss_kb_start\":%ld,"
        "\"rss_kb_end\":%ld,\"fds_start\":%ld,\"fds_end\":%ld,\"threads_end\":%ld,\"seconds\":%.1f}"
        "\n",
        static_cast<unsigned long long>(totals.posts.load()),
        static_cast<unsigned long long>(totals.streams.load()),
        static_cast<unsigned long long>(totals.cancelled.load()),
        static_cast<unsigned long long>(totals.errors.load()), rss_start, status_field("VmRSS"),
        fds_start, open_fds(), status_field("Threads"), seconds);
    return totals.errors.load() == 0 ? 0 : 1;
}
