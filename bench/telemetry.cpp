// bench/telemetry: what the built-in metrics and the OTLP exporter cost a
// call (docs/BENCHMARKS.md, "Telemetry"). Records the events of one streamed
// call (start, response head, first content, end with usage) into one
// nous::llm::Metrics, on 1 and on 16 threads at once, and prints ns per
// call. Then the same events into an OtlpExporter sending to a mock in a
// child process: ns per call on the calling thread (the span assembled and
// queued), and the exporter thread's CPU per span (encoded and sent), from
// getrusage around flushes of 2048 spans. The per-token cost is
// bench/chat_load with --metrics or --otlp against without.
//   telemetry [--calls N]

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "mock_child.hpp"
#include "nous/llm/metrics.hpp"
#include "nous/llm/otlp.hpp"
#include "nous/llm/result.hpp"

namespace {

double cpu_seconds(int who) {
    rusage u{};
    ::getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// A streamed call's four events, as run_chat reports them, into `observer`.
void tell_call(nous::llm::Observer& observer, nous::llm::CallEvent& e,
               const nous::llm::ChatResult& result, long i) {
    e.call_id = static_cast<std::uint64_t>(i) + 1;
    e.result = nullptr;
    e.usage = nullptr;
    for (auto kind : {nous::llm::CallEvent::Kind::start, nous::llm::CallEvent::Kind::response_head,
                      nous::llm::CallEvent::Kind::first_content}) {
        e.kind = kind;
        observer.on_event(e);
    }
    e.kind = nous::llm::CallEvent::Kind::end;
    e.elapsed = std::chrono::milliseconds(i % 5000);
    e.time_to_first_chunk = std::chrono::milliseconds(i % 700);
    e.time_per_output_chunk = std::chrono::milliseconds(20);
    e.result = &result;
    e.usage = &*result.usage;
    observer.on_event(e);
}

nous::llm::CallEvent streamed_call() {
    nous::llm::CallEvent e;
    e.provider = "openai";
    e.request_model = "gpt-4o-mini";
    e.server_address = "api.openai.com";
    e.server_port = 443;
    e.streamed = true;
    return e;
}

/// The OTLP exporter's cost: per call on the caller's thread, per span on its own.
int otlp_costs(long calls, const nous::llm::ChatResult& result) {
    nous::bench::MockChild collector = nous::bench::mock_in_child();  // its CPU is not ours
    nous::llm::OtlpSettings settings;
    const std::string& base = collector.url;
    settings.traces_endpoint = base + "/v1/traces";
    settings.metrics_endpoint = base + "/v1/metrics";
    auto exporter = nous::llm::OtlpExporter::start(settings);
    if (!exporter) return 1;
    constexpr long kQueue = 2048;  // a flush per queueful: nothing dropped
    double caller_ns = 0, export_cpu = 0;
    nous::llm::CallEvent e = streamed_call();
    for (long done = 0; done < calls; done += kQueue) {
        // The caller's own CPU: the exporter's thread may run meanwhile.
        const double t0 = cpu_seconds(RUSAGE_THREAD);
        for (long i = done; i < done + kQueue; ++i) tell_call(*exporter.value(), e, result, i);
        caller_ns += (cpu_seconds(RUSAGE_THREAD) - t0) * 1e9;
        // The caller sleeps in flush(): the process's CPU meanwhile is the exporter's.
        const double self = cpu_seconds(RUSAGE_SELF), mine = cpu_seconds(RUSAGE_THREAD);
        exporter.value()->flush();
        export_cpu += (cpu_seconds(RUSAGE_SELF) - self) - (cpu_seconds(RUSAGE_THREAD) - mine);
    }
    exporter.value()->shutdown();
    collector.stop();
    const auto stats = exporter.value()->stats();
    const long spans = (calls + kQueue - 1) / kQueue * kQueue;
    std::printf("\notlp exporter, %ld calls (%llu spans exported, %llu dropped, %llu failed)\n",
                spans, static_cast<unsigned long long>(stats.spans_exported),
                static_cast<unsigned long long>(stats.spans_dropped),
                static_cast<unsigned long long>(stats.spans_failed));
    std::printf("%-44s %9.0f ns\n", "per call, on the call's thread",
                caller_ns / static_cast<double>(spans));
    std::printf("%-44s %9.2f us\n", "per span, the exporter thread's CPU",
                export_cpu * 1e6 / static_cast<double>(spans));
    return stats.spans_exported == static_cast<std::uint64_t>(spans) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    long calls = argc > 2 && std::string(argv[1]) == "--calls" ? std::stol(argv[2]) : 2'000'000;
    nous::llm::ChatResult result;
    result.usage = nous::llm::Usage{};
    result.usage->input_tokens = 120;
    result.usage->output_tokens = 200;
    std::printf("%-8s %14s\n", "threads", "ns per call");
    for (int threads : {1, 16}) {
        nous::llm::Metrics metrics;
        const long each = calls / threads;
        std::vector<std::thread> workers;
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            workers.emplace_back([&] {
                nous::llm::CallEvent e = streamed_call();
                for (long i = 0; i < each; ++i) tell_call(metrics, e, result, i);
            });
        for (auto& w : workers) w.join();
        const double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        // Wall time over all calls: with more threads than cores it is the
        // machine's time per call, not one thread's.
        std::printf("%-8d %14.0f\n", threads, ns / static_cast<double>(each * threads));
        if (metrics.prometheus_text().empty()) return 1;
    }
    return otlp_costs(std::min(calls, 200'000L), result);
}
