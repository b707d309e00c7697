#pragma once
// Built-in metrics of chat calls, in the Prometheus text exposition for the
// application's own /metrics: the OpenTelemetry GenAI client metrics
// (operation duration, time to first chunk, time per output chunk, token
// usage by type) with the conventions' bucket boundaries, labelled by
// provider, model, and deployment when a router ran the call. Library
// nous_llm; docs/telemetry.md lists each metric.

#include <memory>
#include <string>

#include "nous/llm/telemetry.hpp"

namespace nous::llm {

/// An Observer that records each call at its end (or error). Recording
/// takes no lock that every thread shares: each thread records into one of
/// several shards, merged when the text is rendered. Thread-safe.
class Metrics final : public Observer {
  public:
    Metrics();
    ~Metrics() override;
    Metrics(const Metrics&) = delete;
    Metrics& operator=(const Metrics&) = delete;

    void on_event(const CallEvent& event) noexcept override;

    /// The Prometheus text exposition (version 0.0.4) of everything recorded.
    std::string prometheus_text() const;

  private:
    struct Shards;
    std::unique_ptr<Shards> shards_;
};

}  // namespace nous::llm
