// bench/http_backend_real: a real provider endpoint (not our mock): what a
// user feels, time to first token and total, per backend. Credentials come
// only from the environment and are never printed:
//   OPENROUTER_API_KEY, OPENROUTER_MODEL, OPENROUTER_MAX_TOKENS   (https://openrouter.ai/api/v1)
//   or NOUS_BENCH_BASE_URL, NOUS_BENCH_API_KEY (any OpenAI-compatible server, e.g. nouscli
//   mock-server)
// Per backend: a smoke request (abort if it fails), N sequential paced requests,
// a pause, then B batches of K concurrent requests. p50/p95/min/max/mean over
// successes; 429s and other errors counted apart. --stream measures time to
// first token and tokens/s per stream backend instead.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "nous/http/backend.hpp"
#include "nous/http/client.hpp"
#include "nous/http/json.hpp"
#include "nous/http/stream.hpp"

using namespace nous::http;
using Clock = std::chrono::steady_clock;

namespace {

struct Settings {
    std::string base_url, api_key, model = "openai/gpt-4o-mini";
    int max_tokens = 16;
    double gap_s = 4, pause_s = 20, batch_gap_s = 15, timeout_s = 120;
    int sequential = 10, batches = 3, batch_size = 5;
    bool stream = false;
};

struct Sample {
    bool ok = false;
    int status = 0;
    double ms = 0;       ///< total latency
    double ttft_ms = 0;  ///< streams: first content token
    int tokens = 0;      ///< streams: content events
};

struct Tally {
    std::mutex mutex;
    std::vector<Sample> samples;
    void add(Sample s) {
        std::lock_guard lock(mutex);
        samples.push_back(s);
    }
};

std::string request_body(const Settings& s, bool stream) {
    return std::string(R"({"model":")") + s.model + R"(","max_tokens":)" +
           std::to_string(s.max_tokens) + (stream ? R"(,"stream":true)" : "") +
           R"(,"messages":[{"role":"user","content":"Reply with exactly: pong"}]})";
}

Options call_options(const Settings& s) {
    Options o;
    o.read_timeout = std::chrono::milliseconds(static_cast<long long>(s.timeout_s * 1000));
    o.max_retries = 0;  // benchmarks count failures, they do not hide them
    return o;
}

Sample one_post(const Settings& s, const std::string& backend) {
    Headers h;
    add_bearer_auth(h, s.api_key);
    Options o = call_options(s);
    o.backend = backend;
    auto t0 = Clock::now();
    auto r = post(s.base_url + "/chat/completions", request_body(s, false), h, o);
    Sample out;
    out.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (r) {
        auto doc = parse_json(r->body);
        out.ok = doc.ok() && doc.value()->IsObject() && doc.value()->HasMember("choices");
        out.status = r->status;
    } else {
        out.status = r.error().status;
    }
    return out;
}

Sample one_stream(const Settings& s, const std::string& stream_backend) {
    Headers h;
    add_bearer_auth(h, s.api_key);
    Options o = call_options(s);
    o.stream_backend = stream_backend;
    auto t0 = Clock::now();
    Stream st = stream(s.base_url + "/chat/completions", request_body(s, true), h, o);
    Sample out;
    while (auto item = st.next()) {
        if (item->is_error()) {
            out.status = item->error->status;
            out.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            return out;
        }
        if (item->is_done()) break;
        auto doc = parse_json(item->event.data);
        if (!doc || !doc.value()->IsObject() || !doc.value()->HasMember("choices")) continue;
        auto& choices = (*doc.value())["choices"];
        if (!choices.IsArray() || choices.Empty() || !choices[0].HasMember("delta")) continue;
        auto& delta = choices[0]["delta"];
        if (delta.HasMember("content") && delta["content"].IsString() &&
            delta["content"].GetStringLength() > 0) {
            if (out.tokens++ == 0)
                out.ttft_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        }
    }
    out.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    out.ok = out.tokens > 0;
    out.status = st.stats().status;
    return out;
}

double pct(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1,
                      static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1)];
}

void report(const std::string& label, const std::vector<Sample>& samples, bool stream) {
    std::vector<double> ms, ttft, rate;
    int rate_limited = 0, errors = 0;
    for (const auto& s : samples) {
        if (s.ok) {
            ms.push_back(s.ms);
            if (stream) {
                ttft.push_back(s.ttft_ms);
                double gen_s = (s.ms - s.ttft_ms) / 1000.0;
                if (s.tokens > 1 && gen_s > 0) rate.push_back((s.tokens - 1) / gen_s);
            }
        } else if (s.status == 429) {
            ++rate_limited;
        } else {
            ++errors;
        }
    }
    if (ms.empty()) {
        std::printf("%-22s %4zu ok=0 429=%d errors=%d\n", label.c_str(), samples.size(),
                    rate_limited, errors);
        return;
    }
    double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    std::printf("%-22s %4zu %8.1f %8.1f %8.1f %8.1f %8.1f %5d %6d", label.c_str(), ms.size(),
                pct(ms, 0.5), pct(ms, 0.95), *std::min_element(ms.begin(), ms.end()),
                *std::max_element(ms.begin(), ms.end()), mean, rate_limited, errors);
    if (stream && !ttft.empty())
        std::printf(" %9.1f %9.1f %8.1f", pct(ttft, 0.5), pct(ttft, 0.95),
                    rate.empty() ? 0.0
                                 : std::accumulate(rate.begin(), rate.end(), 0.0) /
                                       static_cast<double>(rate.size()));
    std::printf("\n");
    std::fflush(stdout);
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

}  // namespace

int main(int argc, char** argv) {
    Settings s;
    if (const char* key = std::getenv("OPENROUTER_API_KEY"); key && *key) {
        s.base_url = "https://openrouter.ai/api/v1";
        s.api_key = key;
        if (const char* m = std::getenv("OPENROUTER_MODEL"); m && *m) s.model = m;
        if (const char* t = std::getenv("OPENROUTER_MAX_TOKENS"); t && *t)
            s.max_tokens = std::atoi(t);
    }
    if (const char* base = std::getenv("NOUS_BENCH_BASE_URL"); base && *base) {
        s.base_url = base;
        const char* key = std::getenv("NOUS_BENCH_API_KEY");
        s.api_key = key ? key : "";
    }
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto v = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string("0"); };
        if (k == "--gap-s")
            s.gap_s = std::stod(v());
        else if (k == "--pause-s")
            s.pause_s = std::stod(v());
        else if (k == "--batch-gap-s")
            s.batch_gap_s = std::stod(v());
        else if (k == "--sequential")
            s.sequential = std::stoi(v());
        else if (k == "--batches")
            s.batches = std::stoi(v());
        else if (k == "--batch-size")
            s.batch_size = std::stoi(v());
        else if (k == "--timeout-s")
            s.timeout_s = std::stod(v());
        else if (k == "--model")
            s.model = v();
        else if (k == "--stream")
            s.stream = true;
        else {
            std::fprintf(
                stderr,
                "usage: http_backend_real [--stream] [--gap-s 4] [--pause-s 20] [--batch-gap-s 15] "
                "[--sequential 10] [--batches 3] [--batch-size 5] [--timeout-s 120] [--model M]\n");
            return 2;
        }
    }
    if (s.base_url.empty()) {
        std::fprintf(stderr,
                     "http_backend_real: set OPENROUTER_API_KEY, or NOUS_BENCH_BASE_URL (and "
                     "NOUS_BENCH_API_KEY)\n");
        return 2;
    }
    // The endpoint without its query (a key may hide there); never the key itself.
    std::string shown = s.base_url.substr(0, s.base_url.find('?'));
    std::printf("# endpoint %s, model %s, max_tokens %d, api key %s; %s\n", shown.c_str(),
                s.model.c_str(), s.max_tokens, s.api_key.empty() ? "none" : "set (not shown)",
                s.stream ? "streaming" : "non-streaming");
    std::printf(
        "# %d sequential %.1f s apart, pause %.1f s, %d batches of %d concurrent %.1f s apart; "
        "ms\n",
        s.sequential, s.gap_s, s.pause_s, s.batches, s.batch_size, s.batch_gap_s);

    std::vector<std::string> backends =
        s.stream ? std::vector<std::string>{"window", "pull"} : backend_names();
    if (!s.stream)
        backends.erase(std::remove_if(backends.begin(), backends.end(),
                                      [](auto& b) { return b != "pooled" && b != "curl"; }),
                       backends.end());
    auto one = [&](const std::string& b) { return s.stream ? one_stream(s, b) : one_post(s, b); };
    for (const auto& b : backends) {
        Sample smoke = one(b);
        if (!smoke.ok) {
            std::fprintf(stderr, "smoke request failed for %s (status %d): aborting\n", b.c_str(),
                         smoke.status);
            return 1;
        }
    }
    std::printf("%-22s %4s %8s %8s %8s %8s %8s %5s %6s%s\n", "backend/phase", "ok", "p50", "p95",
                "min", "max", "mean", "429", "errors",
                s.stream ? "  ttft_p50  ttft_p95  tok/s" : "");
    for (const auto& b : backends) {
        Tally sequential, concurrent;
        for (int i = 0; i < s.sequential; ++i) {
            if (i) sleep_s(s.gap_s);
            sequential.add(one(b));
        }
        sleep_s(s.pause_s);
        for (int batch = 0; batch < s.batches; ++batch) {
            if (batch) sleep_s(s.batch_gap_s);
            std::vector<std::thread> threads;
            for (int k = 0; k < s.batch_size; ++k)
                threads.emplace_back([&] { concurrent.add(one(b)); });
            for (auto& t : threads) t.join();
        }
        report(b + " sequential", sequential.samples, s.stream);
        report(b + " concurrent", concurrent.samples, s.stream);
    }
    return 0;
}
