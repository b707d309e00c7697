// Built-in metrics of chat and embeddings calls (metric_series.hpp) rendered
// as the Prometheus text exposition (nous/llm/metrics.hpp).

#include "nous/llm/metrics.hpp"

#include <charconv>

#include "telemetry/metric_series.hpp"

namespace nous::llm {

namespace {

using detail::Histogram;
using detail::kSecondsBounds;
using detail::kTokenBounds;
using detail::kTokenTypeNames;
using detail::Series;
using detail::token_types;

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
    std::string l = "gen_ai_operation_name=\"" + escaped(s.operation) +
                    "\",gen_ai_provider_name=\"" + escaped(s.provider) +
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

struct Metrics::Shards : detail::MetricShards {};
Metrics::Metrics() : shards_(std::make_unique<Shards>()) {}
Metrics::~Metrics() = default;

void Metrics::on_event(const CallEvent& e) noexcept { shards_->record(e); }

std::string Metrics::prometheus_text() const {
    const std::map<std::string, Series> all = shards_->merged();
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
                render(out, f.name, labels_of(s), s.*f.histogram, kSecondsBounds);
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
                    s.tokens[t], kTokenBounds);
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
