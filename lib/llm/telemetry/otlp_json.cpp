// OTLP's JSON encoding of spans and metrics (otlp_json.hpp).

#include "telemetry/otlp_json.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "json/json_string.hpp"

namespace nous::llm::detail {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void key(Writer& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}
void text(Writer& w, std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}
/// A double as the protobuf JSON mapping writes it: a number, or "NaN",
/// "Infinity" or "-Infinity" as a string. A Writer refuses those as numbers
/// and writes nothing, which would leave the whole batch broken JSON (a
/// price the application set to infinity, an attribute of NaN).
void number(Writer& w, double v) {
    if (std::isfinite(v)) {
        w.Double(v);
    } else {
        text(w, std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
    }
}

/// The protobuf JSON mapping writes 64-bit integers as decimal strings.
void int64_string(Writer& w, std::int64_t v) { text(w, std::to_string(v)); }
void uint64_string(Writer& w, std::uint64_t v) { text(w, std::to_string(v)); }

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
        number(w, *d);
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
    number(w, h.sum);
    key(w, "bucketCounts");
    w.StartArray();
    for (std::uint64_t n : h.buckets) uint64_string(w, n);
    w.EndArray();
    key(w, "explicitBounds");
    w.StartArray();
    for (double b : bounds) number(w, b);
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

/// The span writer: spans are the exporter's bulk, so they are written by
/// hand (literal names copied whole, values escaped only where they must be)
/// rather than through RapidJSON's writer, which checks every byte of every
/// name. The envelope around them is still RapidJSON's.
class SpanWriter {
  public:
    explicit SpanWriter(std::string& out) : out_(out) {}

    void literal(std::string_view s) { out_.append(s); }
    /// A JSON string: quotes, backslashes and control bytes escaped.
    void string(std::string_view v) { append_json_string(out_, v); }
    /// A 64-bit integer as the mapping writes it: a decimal string.
    template <typename Integer>
    void decimal_string(Integer v) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
        out_ += '"';
        out_.append(digits, end);
        out_ += '"';
    }
    template <std::size_t N>
    void hex(const std::array<std::uint8_t, N>& id) {
        static constexpr char digits[] = "0123456789abcdef";
        char text[2 * N + 2];
        text[0] = text[2 * N + 1] = '"';
        for (std::size_t i = 0; i < N; ++i) {
            text[1 + 2 * i] = digits[id[i] >> 4];
            text[2 + 2 * i] = digits[id[i] & 15];
        }
        out_.append(text, sizeof text);
    }

    // The attribute visitor (CallFacts::visit), each a KeyValue.
    void operator()(const char* name, std::string_view v) {
        open_attribute(name);
        literal("{\"stringValue\":");
        string(v);
        literal("}}");
    }
    void operator()(const char* name, std::int64_t v) {
        open_attribute(name);
        literal("{\"intValue\":");
        decimal_string(v);
        literal("}}");
    }
    void operator()(const char* name, OneStringList v) {
        open_attribute(name);
        literal("{\"arrayValue\":{\"values\":[{\"stringValue\":");
        string(v.value);
        literal("}]}}}");
    }
    void begin_attributes() { first_attribute_ = true; }

  private:
    void open_attribute(const char* name) {
        if (!first_attribute_) out_ += ',';
        first_attribute_ = false;
        literal("{\"key\":\"");
        literal(name);  // the conventions' names: nothing to escape
        literal("\",\"value\":");
    }
    std::string& out_;
    bool first_attribute_ = true;
};

void write_span(SpanWriter& w, const SpanRecord& s) {
    w.literal("{\"traceId\":");
    w.hex(s.trace_id);
    w.literal(",\"spanId\":");
    w.hex(s.span_id);
    if (s.parent_span_id != SpanId{}) {
        w.literal(",\"parentSpanId\":");
        w.hex(s.parent_span_id);
    }
    // W3C trace flags "sampled", with OTLP's HAS_IS_REMOTE bit, and
    // IS_REMOTE when the parent is the application's (its traceparent).
    w.literal(s.remote_parent ? ",\"flags\":769,\"name\":" : ",\"flags\":257,\"name\":");
    w.string(s.facts.model.empty() ? s.facts.operation : s.facts.operation + " " + s.facts.model);
    w.literal(",\"kind\":");
    w.literal(std::to_string(s.kind));
    w.literal(",\"startTimeUnixNano\":");
    w.decimal_string(s.start_unix_nano);
    w.literal(",\"endTimeUnixNano\":");
    w.decimal_string(s.end_unix_nano);
    w.literal(",\"attributes\":[");
    w.begin_attributes();
    s.facts.visit(w);
    if (!s.input_messages.empty()) w("gen_ai.input.messages", s.input_messages);
    if (!s.output_messages.empty()) w("gen_ai.output.messages", s.output_messages);
    w.literal("]");
    if (s.first_chunk_unix_nano != 0) {
        w.literal(",\"events\":[{\"timeUnixNano\":");
        w.decimal_string(s.first_chunk_unix_nano);
        w.literal(",\"name\":\"gen_ai.first_chunk\"}]");
    }
    if (s.error) {
        w.literal(",\"status\":{\"message\":");
        w.string(s.status_message);
        w.literal(",\"code\":2}}");  // STATUS_CODE_ERROR
    } else {
        w.literal(",\"status\":{}}");
    }
}

}  // namespace

std::string traces_request_json(const OtlpSource& source, std::span<const SpanRecord> spans) {
    // The envelope by RapidJSON, with a marker where the spans go.
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    open_envelope(w, source, "resourceSpans", "scopeSpans", "spans");
    close_envelope(w);
    const std::string_view envelope(buffer.GetString(), buffer.GetSize());
    // The last "spans":[ is the marker: the envelope ends with its items.
    const std::size_t spans_at = envelope.rfind("\"spans\":[") + 9;
    std::string out;
    out.reserve(envelope.size() + spans.size() * 800);  // about 700 bytes a span
    out.append(envelope.substr(0, spans_at));
    SpanWriter writer(out);
    for (std::size_t i = 0; i < spans.size(); ++i) {
        if (i) out += ',';
        write_span(writer, spans[i]);
    }
    out.append(envelope.substr(spans_at));
    return out;
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
            number(w, s.cost_usd);
            w.EndObject();
        }
        close_metric(w, true);
    }
    close_envelope(w);
    return taken(buffer);
}

}  // namespace nous::llm::detail
