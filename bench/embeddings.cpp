// bench/embeddings: what reading embeddings costs (docs/BENCHMARKS.md, "Embeddings").
//
//   embeddings [--rows 2048] [--dims 1536] [--reps 7]
//     decode: one OpenAI response of rows x dims, as base64 and as floats:
//       MB/s of response bytes for parse_embedding_response (ours), for a
//       RapidJSON DOM read of the same body into a matrix (the usual
//       hand-written way), and for memcpy of the body (the limit);
//     end to end: the same bodies served by an in-process mock, through
//       embed() against post() of the same request with no decoding (the
//       transfer alone): wall time and the calling thread's CPU.
//   embeddings --rss --url-base URL [--rows N] [--dims D] [--batch B] [--concurrency C]
//     one embed() call against a server (nouscli mock-server): the peak RSS it
//     added, against the matrix and the responses in flight.
// Prints one table (or one JSON line with --rss); single calling thread.

#include <rapidjson/document.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "nous/http/client.hpp"
#include "nous/llm/embed.hpp"
#include "nous/mock/mock_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    std::size_t rows = 2048, dims = 1536, batch = 2048, concurrency = 4;
    int reps = 7;
    bool rss = false;
    bool end_to_end_only = false;  ///< --end-to-end: the end-to-end table alone (for profiling)
    std::string url_base;
};

/// A deterministic value in (-0.1, 0.1), as embedding values are.
float value_at(std::size_t i) {
    std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return static_cast<float>(static_cast<double>(x >> 40) / 16777216.0 * 0.2 - 0.1);
}

void append_base64(std::string& out, const unsigned char* p, std::size_t n) {
    static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v =
            (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
        out += a[v >> 18];
        out += a[(v >> 12) & 63];
        out += a[(v >> 6) & 63];
        out += a[v & 63];
    }
    if (i < n) {  // float rows are 4 bytes a value: one or two bytes left
        const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (i + 1 < n ? p[i + 1] << 8 : 0);
        out += a[v >> 18];
        out += a[(v >> 12) & 63];
        out += i + 1 < n ? a[(v >> 6) & 63] : '=';
        out += '=';
    }
}

/// An OpenAI embeddings response of rows x dims, base64 or floats.
std::string response_body(std::size_t rows, std::size_t dims, bool base64) {
    std::string out = R"({"object":"list","data":[)";
    std::vector<float> row(dims);
    char number[32];
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < dims; ++j) row[j] = value_at(r * dims + j);
        out += (r ? "," : "");
        out += R"({"object":"embedding","index":)" + std::to_string(r) + R"(,"embedding":)";
        if (base64) {
            out += '"';
            append_base64(out, reinterpret_cast<const unsigned char*>(row.data()), dims * 4);
            out += '"';
        } else {
            out += '[';
            for (std::size_t j = 0; j < dims; ++j) {
                if (j) out += ',';
                auto [end, ec] = std::to_chars(number, number + sizeof number, row[j]);
                out.append(number, end);
            }
            out += ']';
        }
        out += '}';
    }
    return out + R"(],"model":"bench","usage":{"prompt_tokens":4096,"total_tokens":4096}})";
}

/// A plain base64 decoder for the DOM reader's strings (what a hand-written reader would use).
void decode_base64(const char* s, std::size_t n, unsigned char* out) {
    static const auto table = [] {
        std::array<int, 256> t{};
        t.fill(-1);
        const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = i;
        return t;
    }();
    std::uint32_t acc = 0;
    int bits = 0;
    for (std::size_t i = 0; i < n && s[i] != '='; ++i) {
        acc = (acc << 6) | static_cast<std::uint32_t>(table[static_cast<unsigned char>(s[i])]);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *out++ = static_cast<unsigned char>(acc >> bits);
        }
    }
}

/// The DOM read: parse, then walk data[i].embedding into a new matrix (as
/// parse_embedding_response makes one: both pay for their result's memory).
std::size_t dom_read(const std::string& body, std::size_t rows, std::size_t dims) {
    std::vector<float> matrix(rows * dims);
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError()) return 0;
    const auto& data = doc["data"];
    for (const auto& item : data.GetArray()) {
        float* row = matrix.data() + item["index"].GetUint64() * dims;
        const auto& e = item["embedding"];
        if (e.IsString())
            decode_base64(e.GetString(), e.GetStringLength(),
                          reinterpret_cast<unsigned char*>(row));
        else
            for (rapidjson::SizeType j = 0; j < e.Size(); ++j) row[j] = e[j].GetFloat();
    }
    return data.Size();
}

template <typename F>
double median_ms(int reps, F&& run) {
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        run();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double thread_cpu_ms() {
    rusage u{};
    ::getrusage(RUSAGE_THREAD, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/// Median wall and CPU (this thread) of `run`, in ms.
template <typename F>
std::pair<double, double> median_wall_cpu(int reps, F&& run) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < reps; ++r) {
        const double c0 = thread_cpu_ms();
        const auto t0 = Clock::now();
        run();
        wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        cpu.push_back(thread_cpu_ms() - c0);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

nous::llm::EmbedRequest request_for(const std::string& base, std::size_t rows, std::size_t batch,
                                    std::size_t concurrency) {
    nous::llm::EmbedRequest r;
    r.base_url = base;
    r.model = "bench";
    r.api_key = "sk-bench";
    r.batch_size = batch;
    r.concurrency = concurrency;
    r.inputs.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i) r.inputs.push_back("input text " + std::to_string(i));
    return r;
}

void fail(const char* what, const nous::http::Error& e) {
    std::fprintf(stderr, "embeddings: %s: %s\n", what, e.message.c_str());
    std::exit(1);
}

int run_rss(const Args& a) {
    auto request = request_for(a.url_base, a.rows, a.batch, a.concurrency);
    request.dimensions = static_cast<int>(a.dims);
    const long before = nous::bench::peak_rss_kb();
    nous::bench::reset_peak_rss();
    const long start = nous::bench::peak_rss_kb();
    auto e = nous::llm::embed(request);
    if (!e) fail("embed", e.error());
    const long peak = nous::bench::peak_rss_kb();
    const double matrix_kb = static_cast<double>(e->values.size() * sizeof(float)) / 1024;
    // One batch's base64 response: its rows' bytes x 4/3, plus the JSON around them.
    const double response_kb =
        static_cast<double>(std::min(a.batch, a.rows) * (a.dims * 4 * 4 / 3 + 60)) / 1024;
    std::printf(
        "{\"rows\":%zu,\"dims\":%zu,\"batch\":%zu,\"concurrency\":%zu,\"rss_kb_before\":%ld,"
        "\"rss_kb_start\":%ld,\"rss_kb_peak\":%ld,\"added_kb\":%ld,\"matrix_kb\":%.0f,"
        "\"response_kb\":%.0f,\"added_over_matrix_plus_in_flight\":%.2f}\n",
        a.rows, a.dims, a.batch, a.concurrency, before, start, peak, peak - start, matrix_kb,
        response_kb,
        static_cast<double>(peak - start) /
            (matrix_kb + response_kb * static_cast<double>(std::min(
                                           a.concurrency, (a.rows + a.batch - 1) / a.batch))));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (arg == "--rows")
            a.rows = std::stoul(next());
        else if (arg == "--dims")
            a.dims = std::stoul(next());
        else if (arg == "--reps")
            a.reps = std::stoi(next());
        else if (arg == "--batch")
            a.batch = std::stoul(next());
        else if (arg == "--concurrency")
            a.concurrency = std::stoul(next());
        else if (arg == "--url-base")
            a.url_base = next();
        else if (arg == "--rss")
            a.rss = true;
        else if (arg == "--end-to-end")
            a.end_to_end_only = true;
        else {
            std::fprintf(stderr,
                         "usage: embeddings [--rows N] [--dims D] [--reps R] [--end-to-end] | "
                         "--rss --url-base URL "
                         "...\n");
            return 2;
        }
    }
    if (a.rss) return run_rss(a);

    std::printf("rows %zu x dims %zu, median of %d\n\n", a.rows, a.dims, a.reps);
    std::printf("%-8s %-26s %10s %10s %8s\n", "body", "reader", "ms", "MB/s", "vs DOM");
    std::string copy;
    struct Body {
        const char* name;
        std::string text;
    };
    std::vector<Body> bodies = {{"base64", response_body(a.rows, a.dims, true)},
                                {"floats", response_body(a.rows, a.dims, false)}};
    for (const Body& b : bodies) {
        if (a.end_to_end_only) break;
        const double mb = static_cast<double>(b.text.size()) / 1e6;
        const double ours = median_ms(a.reps, [&] {
            auto e =
                nous::llm::parse_embedding_response(nous::llm::Provider::openai, b.text, a.rows);
            if (!e) fail("parse", e.error());
        });
        const double dom = median_ms(a.reps, [&] {
            if (dom_read(b.text, a.rows, a.dims) != a.rows) std::exit(1);
        });
        copy.resize(b.text.size());
        const double limit = median_ms(a.reps, [&] {
            std::memcpy(copy.data(), b.text.data(), b.text.size());
            asm volatile("" : : "r"(copy.data()) : "memory");
        });
        std::printf("%-8s %-26s %10.2f %10.0f %8s   (%.1f MB)\n", b.name, "memcpy (the limit)",
                    limit, mb / limit * 1e3, "", mb);
        std::printf("%-8s %-26s %10.2f %10.0f %8.2f\n", b.name, "RapidJSON DOM", dom,
                    mb / dom * 1e3, 1.0);
        std::printf("%-8s %-26s %10.2f %10.0f %8.2f\n", b.name, "parse_embedding_response", ours,
                    mb / ours * 1e3, dom / ours);
    }

    // End to end: the mock serves the prepared body; embed() decodes it, post() only receives it.
    std::printf("\n%-8s %-26s %10s %10s %10s\n", "body", "call", "wall ms", "cpu ms", "vs post");
    for (const Body& b : bodies) {
        nous::http::MockServer server;
        server.set_handler([&](const nous::http::MockRequest&, nous::http::MockResponse& r) {
            r.body = b.text;
            return true;
        });
        server.start();
        auto request = request_for(server.base_url(), a.rows, a.rows, 1);
        std::string request_body = R"({"model":"bench","input":[)";
        for (std::size_t i = 0; i < a.rows; ++i)
            request_body += (i ? ",\"" : "\"") + request.inputs[i] + "\"";
        request_body += R"(],"encoding_format":"base64"})";
        const nous::http::Headers headers = {{"Content-Type", "application/json"},
                                             {"authorization", "Bearer sk-bench"}};
        const std::string url = server.base_url() + "/embeddings";
        auto transfer = median_wall_cpu(a.reps, [&] {
            auto r = nous::http::post(url, request_body, headers);
            if (!r) fail("post", r.error());
        });
        auto through = median_wall_cpu(a.reps, [&] {
            auto e = nous::llm::embed(request);
            if (!e) fail("embed", e.error());
        });
        std::printf("%-8s %-26s %10.2f %10.2f %10s\n", b.name, "post() (the transfer)",
                    transfer.first, transfer.second, "");
        std::printf("%-8s %-26s %10.2f %10.2f %10.2f\n", b.name, "embed()", through.first,
                    through.second, through.first / transfer.first);
        server.stop();
    }
    return 0;
}
