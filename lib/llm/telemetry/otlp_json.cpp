// OTLP's JSON encoding of spans and metrics (otlp_json.hpp).

#include "telemetry/otlp_json.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

namespace nous::llm::detail {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void key(Writer& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}
void text(Writer& w, std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}
/// The protobuf JSON mapping writes 64-bit integers as decimal strings.
void int64_string(Writer& w, std::int64_t v) { text(w, std::to_string(v)); }
void uint64_string(Writer& w, std::uint64_t v) { text(w, std::to_string(v)); }

/// OTLP writes trace and span ids as lower-case hex, not the mapping's base64.
template <std::size_t N>
void hex(Writer& w, const std::array<std::uint8_t, N>& id) {
    static constexpr char digits[] = "0123456789abcdef";
    char out[2 * N];
    for (std::size_t i = 0; i < N; ++i) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 15];
    }
    text(w, std::string_view(out, 2 * N));
}

void any_value(Writer& w, const AttributeValue& value) {
    w.StartObject();
    if (const auto* s = std::get_if<std::string>(&value)) {
        key(w, "stringValue");
        text(w, *s);
    } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
        key(w, "intValue");
        int64_string(w, *i);
    } else if (const auto* d = std::get_if<double>(&value)) {
        key(w, "doubleValue");
        w.Double(*d);
    } else if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
        key(w, "arrayValue");
        w.StartObject();
        key(w, "values");
        w.StartArray();
        for (const auto& item : *list) {
            w.StartObject();
            key(w, "stringValue");
            text(w, item);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndObject();
}

void attributes(Writer& w, const Attributes& attrs) {
    key(w, "attributes");
    w.StartArray();
    for (const auto& [name, value] : attrs) {
        w.StartObject();
        key(w, "key");
        text(w, name);
        key(w, "value");
        any_value(w, value);
        w.EndObject();
    }
    w.EndArray();
}

void key_value_open(Writer& w, std::string_view name) {
    w.StartObject();
    key(w, "key");
    text(w, name);
    key(w, "value");
    w.StartObject();
}

void key_value_close(Writer& w) {
    w.EndObject();
    w.EndObject();
}

/// A span's attributes, written straight from its facts.
void span_attributes(Writer& w, const SpanRecord& s) {
    key(w, "attributes");
    w.StartArray();
    struct Write {
        Writer& w;
        void operator()(const char* name, std::string_view v) {
            key_value_open(w, name);
            key(w, "stringValue");
            text(w, v);
            key_value_close(w);
        }
        void operator()(const char* name, std::int64_t v) {
            key_value_open(w, name);
            key(w, "intValue");
            int64_string(w, v);
            key_value_close(w);
        }
        void operator()(const char* name, OneStringList v) {
            key_value_open(w, name);
            key(w, "arrayValue");
            w.StartObject();
            key(w, "values");
            w.StartArray();
            w.StartObject();
            key(w, "stringValue");
            text(w, v.value);
            w.EndObject();
            w.EndArray();
            w.EndObject();
            key_value_close(w);
        }
    } write{w};
    s.facts.visit(write);
    if (!s.input_messages.empty()) write("gen_ai.input.messages", s.input_messages);
    if (!s.output_messages.empty()) write("gen_ai.output.messages", s.output_messages);
    w.EndArray();
}

/// {"resource":{...},"scope…":[{"scope":{...},"<items>":[ — the caller writes the items.
void open_envelope(Writer& w, const OtlpSource& source, std::string_view resource_list,
                   std::string_view scope_list, std::string_view items) {
    w.StartObject();
    key(w, resource_list);
    w.StartArray();
    w.StartObject();
    key(w, "resource");
    w.StartObject();
    attributes(w, source.resource);
    w.EndObject();
    key(w, scope_list);
    w.StartArray();
    w.StartObject();
    key(w, "scope");
    w.StartObject();
    key(w, "name");
    text(w, "nous-http");
    key(w, "version");
    text(w, source.scope_version);
    w.EndObject();
    key(w, items);
    w.StartArray();
}

void close_envelope(Writer& w) {
    w.EndArray();   // items
    w.EndObject();  // scope entry
    w.EndArray();
    w.EndObject();  // resource entry
    w.EndArray();
    w.EndObject();
}

std::string taken(rapidjson::StringBuffer& buffer) {
    return std::string(buffer.GetString(), buffer.GetSize());
}

Attributes series_attributes(const Series& s) {
    Attributes a;
    a.emplace_back("gen_ai.operation.name", s.operation);
    a.emplace_back("gen_ai.provider.name", s.provider);
    a.emplace_back("gen_ai.request.model", s.model);
    if (!s.deployment.empty()) a.emplace_back("nous.deployment", s.deployment);
    if (!s.error_type.empty()) a.emplace_back("error.type", s.error_type);
    return a;
}

struct Span {
    std::uint64_t start, now;
};

/// A data point's opening: its attributes and the cumulative span it covers.
void open_point(Writer& w, const Attributes& attrs, Span span) {
    w.StartObject();
    attributes(w, attrs);
    key(w, "startTimeUnixNano");
    uint64_string(w, span.start);
    key(w, "timeUnixNano");
    uint64_string(w, span.now);
}

void histogram_point(Writer& w, const Attributes& attrs, const Histogram& h,
                     const std::array<double, 14>& bounds, Span span) {
    open_point(w, attrs, span);
    key(w, "count");
    uint64_string(w, h.count);
    key(w, "sum");
    w.Double(h.sum);
    key(w, "bucketCounts");
    w.StartArray();
    for (std::uint64_t n : h.buckets) uint64_string(w, n);
    w.EndArray();
    key(w, "explicitBounds");
    w.StartArray();
    for (double b : bounds) w.Double(b);
    w.EndArray();
    w.EndObject();
}

void open_metric(Writer& w, std::string_view name, std::string_view description,
                 std::string_view unit, std::string_view data) {
    w.StartObject();
    key(w, "name");
    text(w, name);
    key(w, "description");
    text(w, description);
    key(w, "unit");
    text(w, unit);
    key(w, data);
    w.StartObject();
    key(w, "dataPoints");
    w.StartArray();
}

/// SpanFlags: TraceFlags 0x01 (sampled) | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK (0x100).
constexpr unsigned kSampledLocalParent = 0x101;

/// AGGREGATION_TEMPORALITY_CUMULATIVE: every export counts from the start.
constexpr int kCumulative = 2;

void close_metric(Writer& w, bool monotonic_sum = false) {
    w.EndArray();
    key(w, "aggregationTemporality");
    w.Int(kCumulative);
    if (monotonic_sum) {
        key(w, "isMonotonic");
        w.Bool(true);
    }
    w.EndObject();
    w.EndObject();
}

}  // namespace

std::string traces_request_json(const OtlpSource& source, std::span<const SpanRecord> spans) {
    // About 700 bytes a span: sized once, not grown by doubling.
    rapidjson::StringBuffer buffer(nullptr, 1024 + spans.size() * 1024);
    Writer w(buffer);
    open_envelope(w, source, "resourceSpans", "scopeSpans", "spans");
    for (const SpanRecord& s : spans) {
        w.StartObject();
        key(w, "traceId");
        hex(w, s.trace_id);
        key(w, "spanId");
        hex(w, s.span_id);
        if (s.parent_span_id != SpanId{}) {
            key(w, "parentSpanId");
            hex(w, s.parent_span_id);
        }
        // W3C trace flags "sampled", with OTLP's "parent is not remote" bits
        // (HAS_IS_REMOTE set, IS_REMOTE clear): every parent here is ours.
        key(w, "flags");
        w.Uint(kSampledLocalParent);
        key(w, "name");
        text(w,
             s.facts.model.empty() ? s.facts.operation : s.facts.operation + " " + s.facts.model);
        key(w, "kind");
        w.Int(s.kind);
        key(w, "startTimeUnixNano");
        uint64_string(w, s.start_unix_nano);
        key(w, "endTimeUnixNano");
        uint64_string(w, s.end_unix_nano);
        span_attributes(w, s);
        if (s.first_chunk_unix_nano != 0) {
            key(w, "events");
            w.StartArray();
            w.StartObject();
            key(w, "timeUnixNano");
            uint64_string(w, s.first_chunk_unix_nano);
            key(w, "name");
            text(w, "gen_ai.first_chunk");
            w.EndObject();
            w.EndArray();
        }
        key(w, "status");
        w.StartObject();
        if (s.error) {
            key(w, "message");
            text(w, s.status_message);
            key(w, "code");
            w.Int(2);  // STATUS_CODE_ERROR
        }
        w.EndObject();
        w.EndObject();
    }
    close_envelope(w);
    return taken(buffer);
}

std::string metrics_request_json(const OtlpSource& source,
                                 const std::map<std::string, Series>& series,
                                 std::uint64_t start_unix_nano, std::uint64_t now_unix_nano) {
    if (series.empty()) return {};
    const Span span{start_unix_nano, now_unix_nano};
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    open_envelope(w, source, "resourceMetrics", "scopeMetrics", "metrics");
    struct Family {
        const char* name;
        const char* description;
        Histogram Series::*histogram;
    };
    const Family families[] = {
        {"gen_ai.client.operation.duration", "GenAI operation duration.", &Series::duration},
        {"gen_ai.client.operation.time_to_first_chunk",
         "Time to receive the first chunk in a streaming operation.", &Series::first_chunk},
        {"gen_ai.client.operation.time_per_output_chunk",
         "Time per output chunk after the first, one sample per streamed operation.",
         &Series::per_chunk},
    };
    for (const Family& f : families) {
        bool any = false;
        for (const auto& [k, s] : series) any = any || (s.*f.histogram).count > 0;
        if (!any) continue;
        open_metric(w, f.name, f.description, "s", "histogram");
        for (const auto& [k, s] : series)
            if ((s.*f.histogram).count > 0)
                histogram_point(w, series_attributes(s), s.*f.histogram, kSecondsBounds, span);
        close_metric(w);
    }
    // Token usage: input and output only, as the conventions define the
    // token types; cache reads and reasoning are span attributes.
    bool any_tokens = false;
    for (const auto& [k, s] : series)
        any_tokens = any_tokens || s.tokens[input].count > 0 || s.tokens[output].count > 0;
    if (any_tokens) {
        open_metric(w, "gen_ai.client.token.usage", "Number of input and output tokens used.",
                    "{token}", "histogram");
        for (const auto& [k, s] : series)
            for (TokenType t : {input, output})
                if (s.tokens[t].count > 0) {
                    Attributes a = series_attributes(s);
                    a.emplace_back("gen_ai.token.type", std::string(kTokenTypeNames[t]));
                    histogram_point(w, a, s.tokens[t], kTokenBounds, span);
                }
        close_metric(w);
    }
    bool any_cost = false;
    for (const auto& [k, s] : series) any_cost = any_cost || s.cost_known;
    if (any_cost) {
        open_metric(w, "nous.client.cost", "USD spent, by the application's price table.", "USD",
                    "sum");
        for (const auto& [k, s] : series) {
            if (!s.cost_known) continue;
            open_point(w, series_attributes(s), span);
            key(w, "asDouble");
            w.Double(s.cost_usd);
            w.EndObject();
        }
        close_metric(w, true);
    }
    close_envelope(w);
    return taken(buffer);
}

}  // namespace nous::llm::detail
