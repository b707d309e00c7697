// Built-in metrics of chat calls, recorded into per-thread shards and
// rendered as the Prometheus text exposition (nous/llm/metrics.hpp).

#include "nous/llm/metrics.hpp"

#include <array>
#include <atomic>
#include <charconv>
#include <map>
#include <mutex>

#include "nous/llm/result.hpp"

namespace nous::llm {

namespace {

/// The conventions' boundaries: seconds for the three time histograms
/// (gen_ai.client.operation.duration's, which the chunk timings share),
/// tokens for gen_ai.client.token.usage.
constexpr std::array<double, 14> kSeconds = {0.01, 0.02, 0.04, 0.08,  0.16,  0.32,  0.64,
                                             1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
constexpr std::array<double, 14> kTokens = {
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864};

enum TokenType { input, output, cached_input, reasoning, token_types };
constexpr const char* kTokenTypeNames[token_types] = {"input", "output", "cached_input",
                                                      "reasoning"};

struct Histogram {
    std::array<std::uint64_t, 15> buckets{};  ///< per bucket, not cumulative; the last: +Inf
    double sum = 0;
    std::uint64_t count = 0;

    void add(double value, const std::array<double, 14>& bounds) {
        std::size_t i = 0;
        while (i < bounds.size() && value > bounds[i]) ++i;
        ++buckets[i];
        sum += value;
        ++count;
    }
    void merge(const Histogram& o) {
        for (std::size_t i = 0; i < buckets.size(); ++i) buckets[i] += o.buckets[i];
        sum += o.sum;
        count += o.count;
    }
};

/// Everything recorded under one label set.
struct Series {
    std::string provider, model, deployment, error_type;
    Histogram duration, first_chunk, per_chunk;
    std::array<Histogram, token_types> tokens;
    double cost_usd = 0;      ///< summed over the calls a price table priced
    bool cost_known = false;  ///< one such call at least: the counter is rendered

    void merge(const Series& o) {
        cost_usd += o.cost_usd;
        cost_known = cost_known || o.cost_known;
        duration.merge(o.duration);
        first_chunk.merge(o.first_chunk);
        per_chunk.merge(o.per_chunk);
        for (std::size_t t = 0; t < tokens.size(); ++t) tokens[t].merge(o.tokens[t]);
    }
};

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

std::string number(double v) {
    char out[32];
    auto [end, ec] = std::to_chars(out, out + sizeof out, v);
    return std::string(out, end);
}

/// A label value with Prometheus's escapes (backslash, quote, newline).
std::string escaped(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string labels_of(const Series& s, std::string_view extra = "") {
    std::string l = "gen_ai_operation_name=\"chat\",gen_ai_provider_name=\"" + escaped(s.provider) +
                    "\",gen_ai_request_model=\"" + escaped(s.model) + "\"";
    if (!s.deployment.empty()) l += ",deployment=\"" + escaped(s.deployment) + "\"";
    if (!s.error_type.empty()) l += ",error_type=\"" + escaped(s.error_type) + "\"";
    if (!extra.empty()) l += "," + std::string(extra);
    return l;
}

void render(std::string& out, const std::string& name, const std::string& labels,
            const Histogram& h, const std::array<double, 14>& bounds) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds.size(); ++i) {
        cumulative += h.buckets[i];
        out += name + "_bucket{" + labels + ",le=\"" + number(bounds[i]) + "\"} " +
               std::to_string(cumulative) + "\n";
    }
    out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += name + "_sum{" + labels + "} " + number(h.sum) + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(h.count) + "\n";
}

}  // namespace

struct Metrics::Shards {
    static constexpr std::size_t count = 16;
    struct alignas(64) Shard {
        std::mutex mutex;  ///< taken by the threads that share this shard, and by rendering
        std::map<std::string, Series> series;
    };
    std::array<Shard, count> shards;

    /// This thread's shard: threads are dealt out in turn, so that sixteen
    /// threads record with no lock in common.
    Shard& mine() {
        static std::atomic<std::size_t> next{0};
        thread_local const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
        return shards[index % count];
    }
};

Metrics::Metrics() : shards_(std::make_unique<Shards>()) {}
Metrics::~Metrics() = default;

void Metrics::on_event(const CallEvent& e) noexcept {
    if (e.kind != CallEvent::Kind::end && e.kind != CallEvent::Kind::error) return;
    try {
        std::string key;
        key.reserve(e.provider.size() + e.request_model.size() + e.deployment.size() +
                    e.error_type.size() + 3);
        key.append(e.provider).append(1, '\x1f').append(e.request_model).append(1, '\x1f');
        key.append(e.deployment).append(1, '\x1f').append(e.error_type);
        Shards::Shard& shard = shards_->mine();
        std::lock_guard lock(shard.mutex);
        auto [it, fresh] = shard.series.try_emplace(std::move(key));
        Series& s = it->second;
        if (fresh) {
            s.provider = e.provider;
            s.model = e.request_model;
            s.deployment = e.deployment;
            s.error_type = e.error_type;
        }
        s.duration.add(seconds(e.elapsed), kSeconds);
        if (e.time_to_first_chunk) s.first_chunk.add(seconds(*e.time_to_first_chunk), kSeconds);
        if (e.time_per_output_chunk) s.per_chunk.add(seconds(*e.time_per_output_chunk), kSeconds);
        if (e.result && e.result->usage) {
            const Usage& u = *e.result->usage;
            s.tokens[input].add(static_cast<double>(u.input_tokens), kTokens);
            s.tokens[output].add(static_cast<double>(u.output_tokens), kTokens);
            s.tokens[cached_input].add(static_cast<double>(u.cached_input_tokens), kTokens);
            s.tokens[reasoning].add(static_cast<double>(u.reasoning_tokens), kTokens);
        }
        if (e.result && e.result->cost) {
            s.cost_usd += *e.result->cost;
            s.cost_known = true;
        }
    } catch (...) {
        // Out of memory for a new series: this call goes unrecorded, the call itself is not hurt.
    }
}

std::string Metrics::prometheus_text() const {
    std::map<std::string, Series> all;  // merged, in label order: the same text for the same data
    for (auto& shard : shards_->shards) {
        std::lock_guard lock(shard.mutex);
        for (const auto& [key, s] : shard.series) {
            auto [it, fresh] = all.try_emplace(key, s);
            if (!fresh) it->second.merge(s);
        }
    }
    std::string out;
    struct Family {
        const char* name;
        const char* help;
        Histogram Series::*histogram;
    };
    const Family families[] = {
        {"gen_ai_client_operation_duration_seconds",
         "GenAI operation duration (every call; failed ones with error_type).", &Series::duration},
        {"gen_ai_client_operation_time_to_first_chunk_seconds",
         "Time from the request to the first content chunk of a streamed call.",
         &Series::first_chunk},
        {"gen_ai_client_operation_time_per_output_chunk_seconds",
         "Mean time between content chunks after the first, one sample per streamed call.",
         &Series::per_chunk},
    };
    for (const Family& f : families) {
        out +=
            std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " histogram\n";
        for (const auto& [key, s] : all)
            if ((s.*f.histogram).count > 0)
                render(out, f.name, labels_of(s), s.*f.histogram, kSeconds);
    }
    const std::string tokens = "gen_ai_client_token_usage";
    out += "# HELP " + tokens + " Tokens per call, by gen_ai_token_type.\n# TYPE " + tokens +
           " histogram\n";
    for (const auto& [key, s] : all)
        for (int t = 0; t < token_types; ++t)
            if (s.tokens[t].count > 0)
                render(
                    out, tokens,
                    labels_of(s, "gen_ai_token_type=\"" + std::string(kTokenTypeNames[t]) + "\""),
                    s.tokens[t], kTokens);
    const std::string cost = "gen_ai_client_cost_usd_total";
    bool any_cost = false;
    for (const auto& [key, s] : all) any_cost = any_cost || s.cost_known;
    if (any_cost) {
        out += "# HELP " + cost + " USD spent, by the application's price table.\n# TYPE " + cost +
               " counter\n";
        for (const auto& [key, s] : all)
            if (s.cost_known) out += cost + "{" + labels_of(s) + "} " + number(s.cost_usd) + "\n";
    }
    return out;
}

}  // namespace nous::llm
