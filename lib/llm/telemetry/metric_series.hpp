#pragma once
// The built-in metrics' records (nous_llm internal): one Series of
// histograms per label set, recorded into per-thread shards and merged on
// reading. The Prometheus text (metrics.cpp) and the OTLP exporter
// (otlp_exporter.cpp) each render what one MetricShards holds.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "nous/llm/telemetry.hpp"

namespace nous::llm::detail {

/// The conventions' boundaries: seconds for the three time histograms
/// (gen_ai.client.operation.duration's, which the chunk timings share),
/// tokens for gen_ai.client.token.usage.
inline constexpr std::array<double, 14> kSecondsBounds = {
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
inline constexpr std::array<double, 14> kTokenBounds = {
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864};

enum TokenType { input, output, cached_input, reasoning, token_types };
inline constexpr const char* kTokenTypeNames[token_types] = {"input", "output", "cached_input",
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
    std::string operation, provider, model, deployment, error_type;
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

/// Records each call at its end or error. Recording takes no lock that
/// every thread shares: threads are dealt out over sixteen shards.
class MetricShards {
  public:
    void record(const CallEvent& event) noexcept;
    /// Every series, merged across the shards, in label order.
    std::map<std::string, Series> merged() const;

  private:
    static constexpr std::size_t count = 16;
    struct alignas(64) Shard {
        mutable std::mutex mutex;  ///< taken by the threads that share it, and by reading
        std::map<std::string, Series> series;
    };
    Shard& mine();
    std::array<Shard, count> shards_;
};

}  // namespace nous::llm::detail
