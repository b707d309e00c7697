// OtlpSettings from the specification's OTEL_* variables (nous/llm/otlp.hpp).

#include <algorithm>
#include <cstdlib>

#include "json/ascii.hpp"
#include "nous/llm/otlp.hpp"
#include "platforms/percent_encoding.hpp"

namespace nous::llm {

namespace {

using nous::http::Error;
using nous::http::ErrorCode;

std::string variable(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return std::string(s);
}

bool is_true(const std::string& v) { return detail::ascii_lowered(trimmed(v)) == "true"; }

Error invalid(const std::string& why) { return Error(ErrorCode::invalid_argument, why); }

/// `k=v,k2=v2`, each value percent-decoded (the W3C Baggage form the
/// specification gives OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES).
std::optional<Error> parse_list(const char* name, const std::string& text,
                                std::vector<std::pair<std::string, std::string>>& out) {
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = trimmed(std::string_view(text).substr(start, comma - start));
        start = comma + 1;
        if (item.empty()) continue;
        const auto eq = item.find('=');
        std::string key = eq == std::string::npos ? "" : trimmed(item.substr(0, eq)), value;
        if (key.empty() || !detail::percent_decode(trimmed(item.substr(eq + 1)), value))
            return invalid(std::string(name) + ": \"" + item +
                           "\" is not key=value (values percent-encoded)");
        out.emplace_back(std::move(key), std::move(value));
    }
    return std::nullopt;
}

std::optional<Error> parse_millis(const char* name, std::chrono::milliseconds& out) {
    const std::string text = trimmed(variable(name));
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size() || v <= 0)
        return invalid(std::string(name) + ": \"" + text +
                       "\" is not a positive number of milliseconds");
    out = std::chrono::milliseconds(v);
    return std::nullopt;
}

/// http/json only: http/protobuf needs an encoder we do not build, gRPC a
/// transport we do not have; both are said, not silently replaced.
std::optional<Error> check_protocol(const char* name) {
    const std::string p = trimmed(variable(name));
    if (p.empty() || p == "http/json") return std::nullopt;
    if (p == "http/protobuf")
        return invalid(
            std::string(name) +
            "=http/protobuf: nous-http exports OTLP as http/json only; set it to http/json");
    if (p == "grpc")
        return invalid(
            std::string(name) +
            "=grpc: nous-http exports OTLP over HTTP only; set it to http/json (port 4318)");
    return invalid(std::string(name) + ": unknown protocol \"" + p + "\" (http/json)");
}

std::string signal_url(const std::string& base, std::string_view path) {
    std::string url = base;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url + std::string(path);
}

}  // namespace

nous::http::Result<std::optional<OtlpSettings>> OtlpSettings::from_environment() {
    if (is_true(variable("OTEL_SDK_DISABLED"))) return std::optional<OtlpSettings>();
    for (const char* name : {"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                             "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"})
        if (auto bad = check_protocol(name)) return *bad;
    OtlpSettings s;
    const std::string base = trimmed(variable("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if (!base.empty()) {
        s.traces_endpoint = signal_url(base, "/v1/traces");
        s.metrics_endpoint = signal_url(base, "/v1/metrics");
    }
    if (auto t = trimmed(variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); !t.empty())
        s.traces_endpoint = t;
    if (auto m = trimmed(variable("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")); !m.empty())
        s.metrics_endpoint = m;
    if (auto bad = parse_list("OTEL_EXPORTER_OTLP_HEADERS", variable("OTEL_EXPORTER_OTLP_HEADERS"),
                              s.headers))
        return *bad;
    if (auto bad = parse_millis("OTEL_EXPORTER_OTLP_TIMEOUT", s.timeout)) return *bad;
    if (auto bad = parse_millis("OTEL_METRIC_EXPORT_INTERVAL", s.metric_export_interval))
        return *bad;
    std::vector<std::pair<std::string, std::string>> resource;
    if (auto bad =
            parse_list("OTEL_RESOURCE_ATTRIBUTES", variable("OTEL_RESOURCE_ATTRIBUTES"), resource))
        return *bad;
    for (auto& [name, value] : resource) {
        if (name == "service.name")
            s.service_name = value;
        else
            s.resource.emplace_back(name, std::move(value));
    }
    if (auto name = trimmed(variable("OTEL_SERVICE_NAME")); !name.empty()) s.service_name = name;
    s.capture_content = is_true(variable("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"));
    return std::optional<OtlpSettings>(std::move(s));
}

}  // namespace nous::llm
