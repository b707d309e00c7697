// The library itself: post() on a backend (nous-pooled, nous-curl), and
// stream() with every event decoded (nous-window, nous-pull).

#include <cstdio>

#include "client.hpp"
#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "nous/http/testing.hpp"

namespace bench {

namespace {

struct NousClient : Client {
    nous::http::Options options;
    explicit NousClient(bool nodelay, const std::string& backend) {
        options.max_retries = 0;  // benchmarks never retry
        options.tcp_nodelay = nodelay;
        options.backend = backend;
        options.ca_file = g_tls.cacert;
        options.max_response_bytes = std::size_t{1} << 30;  // body_128m passes the 64 MiB default
    }
    ~NousClient() override {
        if (!g_tls.new_connection || options.backend != "pooled")
            return;  // pool_stats: the pooled backend
        auto stats = nous::http::pool_stats();
        std::fprintf(stderr, "%s: %llu of %llu connections resumed a TLS session\n",
                     options.backend.c_str(),
                     static_cast<unsigned long long>(stats.tls_sessions_resumed),
                     static_cast<unsigned long long>(stats.connections_created));
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        // A fresh connection: the idle one is closed, the origin's TLS session
        // kept (or, with --no-resume, dropped).
        if (g_tls.new_connection) nous::http::pool_clear();
        if (g_tls.no_resume) nous::http::testing::forget_tls_sessions();
        auto r = nous::http::post(url, body, {}, options);
        if (!r) {
            if (r.error().code == nous::http::ErrorCode::http_status) return r.error().status;
            abort_run(std::string(nous::http::to_string(r.error().code)) + ": " +
                      r.error().message);
        }
        out = std::move(r->body);
        return r->status;
    }
};

/// The stream API: every event decoded; the "body" is the event count and data
/// bytes, so the same check applies.
struct NousStreamClient : Client {
    nous::http::Options options;
    NousStreamClient(bool nodelay, const std::string& stream_backend) {
        options.max_retries = 0;
        options.tcp_nodelay = nodelay;
        options.stream_backend = stream_backend;
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        nous::http::Stream s = nous::http::stream(url, body, {}, options);
        std::uint64_t events = 0, bytes = 0;
        bool done = false;
        // The zero-copy path: every event decoded, none copied.
        while (auto item = s.next_view()) {
            if (item->is_error()) {
                if (item->error->code == nous::http::ErrorCode::http_status)
                    return item->error->status;
                abort_run(std::string(nous::http::to_string(item->error->code)) + ": " +
                          item->error->message);
            }
            if (item->is_done()) {
                done = true;
                break;
            }
            ++events;
            bytes += item->event.data.size();
        }
        if (!done) abort_run("stream ended without [DONE]");
        out = std::to_string(events) + " events, " + std::to_string(bytes) + " bytes";
        return 200;
    }
};

}  // namespace

std::unique_ptr<Client> make_nous_client(bool nodelay, const std::string& backend) {
    return std::make_unique<NousClient>(nodelay, backend);
}
std::unique_ptr<Client> make_nous_stream_client(bool nodelay, const std::string& stream_backend) {
    return std::make_unique<NousStreamClient>(nodelay, stream_backend);
}

}  // namespace bench
