// An Observer that turns each chat call into an OpenTelemetry span
// (docs/telemetry.md). Built only where CMake finds opentelemetry-cpp, which
// Debian 12 does not package. One call per thread at a time: the span in
// progress is the thread's.

#include <opentelemetry/trace/provider.h>

#include <memory>
#include <nous/llm/telemetry.hpp>
#include <string>
#include <variant>
#include <vector>

namespace trace = opentelemetry::trace;

class OtelSpans final : public nous::llm::Observer {
  public:
    void on_event(const nous::llm::CallEvent& e) noexcept override {
        using Kind = nous::llm::CallEvent::Kind;
        thread_local opentelemetry::nostd::shared_ptr<trace::Span> span;
        if (e.kind == Kind::start) {
            auto tracer = trace::Provider::GetTracerProvider()->GetTracer("nous-llm");
            span = tracer->StartSpan("chat " + std::string(e.request_model));
        }
        if (!span) return;
        if (e.kind == Kind::first_content) span->AddEvent("first_content");
        if (e.kind == Kind::failover) span->AddEvent("failover " + std::string(e.deployment));
        if (e.kind != Kind::end && e.kind != Kind::error) return;
        for (const auto& [name, value] : e.attributes())
            std::visit([&](const auto& v) { set(*span, name, v); }, value);
        if (e.kind == Kind::error)
            span->SetStatus(trace::StatusCode::kError, std::string(e.error_type));
        span->End();
        span = nullptr;
    }

  private:
    template <typename T>
    static void set(trace::Span& s, const std::string& name, const T& value) {
        s.SetAttribute(name, value);
    }
    static void set(trace::Span& s, const std::string& name,
                    const std::vector<std::string>& value) {
        std::vector<opentelemetry::nostd::string_view> views(value.begin(), value.end());
        s.SetAttribute(name, views);
    }
};

int main() {
    // With a TracerProvider configured for your exporter, every call is a span:
    nous::llm::set_default_observer(std::make_shared<OtelSpans>());
}
