#pragma once
// OTLP's JSON encoding (nous_llm internal): an ExportTraceServiceRequest of
// finished spans and an ExportMetricsServiceRequest of the built-in
// metrics, as the protobuf JSON mapping with OTLP's exceptions writes them
// (lowerCamelCase names, trace and span ids as hex, enums as integers,
// 64-bit integers as decimal strings). docs/design/otlp.md.

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "nous/llm/telemetry.hpp"
#include "telemetry/call_facts.hpp"
#include "telemetry/metric_series.hpp"
#include "telemetry/trace_ids.hpp"

namespace nous::llm::detail {

/// One finished span: its attributes kept as the call's facts, written out
/// only when the span is encoded.
struct SpanRecord {
    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_span_id{};     ///< all zero: a root span
    bool remote_parent = false;  ///< the parent is the application's (a traceparent)
    int kind = 3;                ///< SpanKind: 3 CLIENT
    std::uint64_t start_unix_nano = 0;
    std::uint64_t end_unix_nano = 0;
    CallFacts facts;  ///< the attributes; the name is "OPERATION MODEL"
    /// gen_ai.input.messages / gen_ai.output.messages; empty: not captured.
    std::string input_messages, output_messages;
    /// The first content event's time, as the span event gen_ai.first_chunk; 0: none.
    std::uint64_t first_chunk_unix_nano = 0;
    bool error = false;  ///< status ERROR (code 2) with `status_message`; else UNSET
    std::string status_message;
};

/// The exporter's scope and resource, written once into every request.
struct OtlpSource {
    Attributes resource;  ///< service.name and telemetry.sdk.* among them
    std::string scope_version;
};

std::string traces_request_json(const OtlpSource& source, std::span<const SpanRecord> spans);

/// Every series as cumulative histograms (and the cost counter where a
/// price table priced a call), from `start_unix_nano` (the exporter's start)
/// to `now_unix_nano`. Empty when there is nothing to send.
std::string metrics_request_json(const OtlpSource& source,
                                 const std::map<std::string, Series>& series,
                                 std::uint64_t start_unix_nano, std::uint64_t now_unix_nano);

}  // namespace nous::llm::detail
