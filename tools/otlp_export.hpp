#pragma once
// nouscli's --otlp: the OTLP exporter the OTEL_* variables describe, for one
// command's calls, flushed before the command exits (docs/telemetry.md).

#include <memory>
#include <optional>
#include <string>

#include "nous/llm/otlp.hpp"

namespace nouscli {

class OtlpExport {
  public:
    /// Starts the exporter; a message when the variables cannot be used (a
    /// usage error: exit 2, before any connection). OTEL_SDK_DISABLED=true:
    /// none, quietly.
    std::optional<std::string> start();
    /// The exporter, or nullptr when none runs.
    std::shared_ptr<nous::llm::Observer> observer() const { return exporter_; }
    /// Flushes within OTEL_EXPORTER_OTLP_TIMEOUT. A failed export is said on
    /// stderr and changes nothing else: the call's result and exit code stand.
    ~OtlpExport();

  private:
    std::shared_ptr<nous::llm::OtlpExporter> exporter_;
};

}  // namespace nouscli
