// The built-in metrics' records, sharded per thread (metric_series.hpp).

#include "telemetry/metric_series.hpp"

#include <atomic>

#include "nous/llm/delta.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm::detail {

namespace {
double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

MetricShards::Shard& MetricShards::mine() {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
    return shards_[index % count];
}

void MetricShards::record(const CallEvent& e) noexcept {
    if (e.kind != CallEvent::Kind::end && e.kind != CallEvent::Kind::error) return;
    try {
        std::string key;
        key.reserve(e.operation.size() + e.provider.size() + e.request_model.size() +
                    e.deployment.size() + e.error_type.size() + 4);
        key.append(e.operation).append(1, '\x1f').append(e.provider).append(1, '\x1f');
        key.append(e.request_model).append(1, '\x1f');
        key.append(e.deployment).append(1, '\x1f').append(e.error_type);
        Shard& shard = mine();
        std::lock_guard lock(shard.mutex);
        auto [it, fresh] = shard.series.try_emplace(std::move(key));
        Series& s = it->second;
        if (fresh) {
            s.operation = e.operation;
            s.provider = e.provider;
            s.model = e.request_model;
            s.deployment = e.deployment;
            s.error_type = e.error_type;
        }
        s.duration.add(seconds(e.elapsed), kSecondsBounds);
        if (e.time_to_first_chunk)
            s.first_chunk.add(seconds(*e.time_to_first_chunk), kSecondsBounds);
        if (e.time_per_output_chunk)
            s.per_chunk.add(seconds(*e.time_per_output_chunk), kSecondsBounds);
        // A chat event built by hand may carry its usage in the result only.
        const Usage* usage = e.usage                       ? e.usage
                             : e.result && e.result->usage ? &*e.result->usage
                                                           : nullptr;
        if (usage) {
            const Usage& u = *usage;
            s.tokens[input].add(static_cast<double>(u.input_tokens), kTokenBounds);
            if (e.result) {  // an embeddings call has no output tokens
                s.tokens[output].add(static_cast<double>(u.output_tokens), kTokenBounds);
                s.tokens[cached_input].add(static_cast<double>(u.cached_input_tokens),
                                           kTokenBounds);
                s.tokens[reasoning].add(static_cast<double>(u.reasoning_tokens), kTokenBounds);
            }
        }
        if (e.result && e.result->cost) {
            s.cost_usd += *e.result->cost;
            s.cost_known = true;
        }
    } catch (...) {
        // Out of memory for a new series: this call goes unrecorded, the call itself is not hurt.
    }
}

std::map<std::string, Series> MetricShards::merged() const {
    std::map<std::string, Series> all;  // in label order: the same text for the same data
    for (const auto& shard : shards_) {
        std::lock_guard lock(shard.mutex);
        for (const auto& [key, s] : shard.series) {
            auto [it, fresh] = all.try_emplace(key, s);
            if (!fresh) it->second.merge(s);
        }
    }
    return all;
}

}  // namespace nous::llm::detail
