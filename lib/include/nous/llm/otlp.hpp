#pragma once
// OTLP/HTTP export of the calls' spans and metrics to an OpenTelemetry
// collector, configured by the specification's OTEL_* variables: a span per
// chat or embeddings call (a child per router attempt) and the GenAI client
// metrics as cumulative histograms, in OTLP's JSON encoding, sent from one
// background thread in batches. Export never slows or changes a call: a
// full queue drops (counted), a dead collector is retried within the
// export timeout on the exporter's thread only. Library nous_llm;
// docs/telemetry.md.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nous/http/error.hpp"
#include "nous/http/options.hpp"
#include "nous/http/result.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm {

struct OtlpSettings {
    /// Where spans go, used as it is (the specification's
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else ENDPOINT + "/v1/traces").
    /// Empty: spans are not exported.
    std::string traces_endpoint = "http://localhost:4318/v1/traces";
    /// Where metrics go (likewise, "/v1/metrics"). Empty: not exported.
    std::string metrics_endpoint = "http://localhost:4318/v1/metrics";
    /// Sent with every export request (OTEL_EXPORTER_OTLP_HEADERS).
    nous::http::Headers headers;
    /// Bounds each export, retries included, and shutdown's flush
    /// (OTEL_EXPORTER_OTLP_TIMEOUT, milliseconds).
    std::chrono::milliseconds timeout{10'000};
    /// The resource's service.name (OTEL_SERVICE_NAME).
    std::string service_name = "unknown_service";
    /// More resource attributes (OTEL_RESOURCE_ATTRIBUTES); a service.name
    /// here gives way to `service_name` when that was set by OTEL_SERVICE_NAME.
    Attributes resource;
    /// How often the metrics are sent (OTEL_METRIC_EXPORT_INTERVAL); they are
    /// sent at flush() and shutdown too.
    std::chrono::milliseconds metric_export_interval{60'000};
    /// Prompts and answers as gen_ai.input.messages / gen_ai.output.messages
    /// span attributes (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).
    /// Off: never exported.
    bool capture_content = false;
    /// The export requests' HTTP options (a CA file, a backend); their
    /// retries and total timeout are the exporter's own.
    nous::http::Options http;

    /// The settings the OTEL_* variables give (docs/telemetry.md lists
    /// them); nullopt when OTEL_SDK_DISABLED is true. A value that cannot be
    /// used (a protocol other than http/json, a timeout that is not a
    /// number, a malformed header list) is invalid_argument naming the
    /// variable.
    static nous::http::Result<std::optional<OtlpSettings>> from_environment();
};

/// An Observer that exports what it hears. Set it like any observer
/// (set_default_observer, RouterConfig::observer, ChatRequest::observer,
/// EmbedRequest::observer). Thread-safe.
class OtlpExporter final : public Observer {
  public:
    /// Starts the exporter's thread. invalid_argument for an endpoint that
    /// is not an http(s) URL.
    static nous::http::Result<std::shared_ptr<OtlpExporter>> start(OtlpSettings settings);
    ~OtlpExporter() override;  ///< shutdown()
    OtlpExporter(const OtlpExporter&) = delete;
    OtlpExporter& operator=(const OtlpExporter&) = delete;

    void on_event(const CallEvent& event) noexcept override;

    /// Sends every span finished so far, and the metrics as they stand, and
    /// waits for the collector's answers, up to the timeout. True when all of
    /// it was accepted.
    bool flush();
    /// flush(), then the thread ends. Spans finished after it are dropped
    /// (counted). Idempotent.
    bool shutdown();

    struct Stats {
        std::uint64_t spans_exported = 0;  ///< accepted by the collector
        std::uint64_t spans_dropped = 0;   ///< the queue was full, or the exporter shut down
        /// Sent, and refused (a partial success's rejected spans included) or
        /// never answered within the timeout.
        std::uint64_t spans_failed = 0;
        std::uint64_t metric_exports = 0;  ///< metric requests accepted whole
        /// Refused, in part (a partial success rejecting data points) or whole,
        /// or never answered within the timeout.
        std::uint64_t metric_exports_failed = 0;
        std::string last_error;  ///< the last failed export's error, "" when none
    };
    Stats stats() const;

    struct Impl;

  private:
    explicit OtlpExporter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace nous::llm
