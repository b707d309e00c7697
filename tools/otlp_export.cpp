// nouscli's --otlp (otlp_export.hpp).

#include "otlp_export.hpp"

#include <iostream>

namespace nouscli {

std::optional<std::string> OtlpExport::start() {
    auto settings = nous::llm::OtlpSettings::from_environment();
    if (!settings) return "--otlp: " + settings.error().message;
    if (!settings.value()) return std::nullopt;  // OTEL_SDK_DISABLED
    auto exporter = nous::llm::OtlpExporter::start(std::move(*settings.value()));
    if (!exporter) return "--otlp: " + exporter.error().message;
    exporter_ = std::move(exporter.value());
    return std::nullopt;
}

OtlpExport::~OtlpExport() {
    if (!exporter_) return;
    if (!exporter_->shutdown()) {
        const auto stats = exporter_->stats();
        std::cerr << "nouscli: OTLP export failed: " << stats.last_error << "\n";
    }
}

}  // namespace nouscli
