#pragma once
// What a collector's 200 answer to an OTLP/HTTP export says: the spec lets
// it accept a request in part, naming how many items it rejected and why
// (ExportTraceServiceResponse.partial_success). Such an answer is never
// retried, and the rejected items are not exported.

#include <cstdint>
#include <string>
#include <string_view>

namespace nous::llm::detail {

struct OtlpRejection {
    std::int64_t rejected = 0;  ///< items the collector rejected (0: it took them all)
    std::string why;            ///< its error_message, printable ASCII, at most 200 bytes
};

/// The rejection in a 200 answer's JSON body. The signal's counter is
/// named in lowerCamelCase (`count_camel`, "rejectedSpans") or in the
/// proto's own snake_case (`count_snake`, "rejected_spans"), as are the
/// other names. An empty or unreadable body rejected nothing; the count is
/// read from a number or from the string protobuf's JSON mapping writes an
/// int64 as.
OtlpRejection rejection_of(std::string_view body, const char* count_camel, const char* count_snake);

}  // namespace nous::llm::detail
