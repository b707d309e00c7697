#pragma once
// Trace and span ids (nous_llm internal): new random ones for the OTLP
// exporter's spans, and those of an application's W3C traceparent.
// docs/design/otlp.md.

#include <array>
#include <cstdint>
#include <string_view>

namespace nous::llm::detail {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

/// Random, and unique in the process: a bijection of a counter, seeded
/// afresh in a child of fork().
TraceId random_trace_id();
SpanId random_span_id();

/// A W3C traceparent, version 00: "00-" 32 hex "-" 16 hex "-" 2 hex, the ids
/// not all zero. False for anything else (the span is then a root).
bool parse_traceparent(std::string_view text, TraceId& trace, SpanId& span, bool& sampled);

}  // namespace nous::llm::detail
