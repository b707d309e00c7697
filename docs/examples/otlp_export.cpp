// Every LLM call of the program exported to an OpenTelemetry collector:
// the OTEL_* variables configure it (docs/telemetry.md, "OTLP export").
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OPENAI_BASE_URL=... example_otlp_export
#include <cstdlib>
#include <iostream>

#include "nous/llm/chat.hpp"
#include "nous/llm/otlp.hpp"

int main() {
    auto settings = nous::llm::OtlpSettings::from_environment();
    if (!settings) {
        std::cerr << settings.error().message << "\n";  // names the variable
        return 2;
    }
    std::shared_ptr<nous::llm::OtlpExporter> exporter;
    if (settings.value()) {  // nullopt: OTEL_SDK_DISABLED=true
        auto started = nous::llm::OtlpExporter::start(std::move(*settings.value()));
        if (!started) {
            std::cerr << started.error().message << "\n";
            return 2;
        }
        exporter = started.value();
        nous::llm::set_default_observer(exporter);
    }

    nous::llm::ChatRequest request;
    const char* base = std::getenv("OPENAI_BASE_URL");
    request.base_url = base ? base : "";
    const char* key = std::getenv("OPENAI_API_KEY");
    request.api_key = key ? key : "";
    request.model = "gpt-4o-mini";
    request.messages = {nous::llm::ChatMessage::user("Say hello in five words.")};
    auto answer = nous::llm::run_chat(request);
    if (!answer) {
        std::cerr << answer.error().message << "\n";
        return 1;
    }
    std::cout << answer->text << "\n";
    // Sends what is left and waits for the collector, within OTEL_EXPORTER_OTLP_TIMEOUT.
    if (exporter) {
        if (!exporter->shutdown())
            std::cerr << "OTLP export failed: " << exporter->stats().last_error << "\n";
        std::cout << "spans exported: " << exporter->stats().spans_exported << "\n";
    }
    return 0;
}
