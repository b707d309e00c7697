// bench/telemetry: what the built-in metrics cost a call (docs/BENCHMARKS.md,
// "Telemetry"). Records the events of one streamed call (start, response
// head, first content, end with usage) into one nous::llm::Metrics, on 1 and
// on 16 threads at once, and prints ns per call; the per-token cost is
// bench/chat_load with --metrics against without.
//   telemetry [--calls N]

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "nous/llm/metrics.hpp"
#include "nous/llm/result.hpp"

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
                nous::llm::CallEvent e;
                e.provider = "openai";
                e.request_model = "gpt-4o-mini";
                e.server_address = "api.openai.com";
                e.streamed = true;
                for (long i = 0; i < each; ++i) {
                    // A call's four events, as run_chat reports them.
                    for (auto kind : {nous::llm::CallEvent::Kind::start,
                                      nous::llm::CallEvent::Kind::response_head,
                                      nous::llm::CallEvent::Kind::first_content}) {
                        e.kind = kind;
                        metrics.on_event(e);
                    }
                    e.kind = nous::llm::CallEvent::Kind::end;
                    e.elapsed = std::chrono::milliseconds(i % 5000);
                    e.time_to_first_chunk = std::chrono::milliseconds(i % 700);
                    e.time_per_output_chunk = std::chrono::milliseconds(20);
                    e.result = &result;
                    metrics.on_event(e);
                }
            });
        for (auto& w : workers) w.join();
        const double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        // Wall time over all calls: with more threads than cores it is the
        // machine's time per call, not one thread's.
        std::printf("%-8d %14.0f\n", threads, ns / static_cast<double>(each * threads));
        if (metrics.prometheus_text().empty()) return 1;
    }
    return 0;
}
