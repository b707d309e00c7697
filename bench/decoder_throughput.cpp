// bench/decoder_throughput: MiB/s of the SSE, NDJSON and JSON-array decoders on
// typical OpenAI chunks, and on one 8 MiB event split into 1400-byte pieces.

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nous/http/stream.hpp"

using namespace nous::http;

namespace {

double run(const std::function<std::unique_ptr<Decoder>()>& make, const std::string& input,
           std::size_t piece, int rounds, std::size_t& events) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < rounds; ++r) {
        auto d = make();
        std::vector<Event> out;
        bool done = false;
        events = 0;
        for (std::size_t pos = 0; pos < input.size() && !done; pos += piece) {
            d->feed(std::string_view(input).substr(pos, piece), out, done);
            events += out.size();
            out.clear();
        }
        d->finish(out);
        events += out.size();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(input.size()) * rounds / 1048576.0 / secs;
}

std::string chunk_json(int i) {
    return R"({"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"tok)" +
           std::to_string(i) + R"( "},"finish_reason":null}]})";
}

}  // namespace

int main() {
    constexpr std::size_t target = 32u << 20;
    std::string sse, ndjson, array = "[";
    for (int i = 0; sse.size() < target; ++i) {
        std::string j = chunk_json(i);
        sse += "data: " + j + "\n\n";
        ndjson += j + "\n";
        array += (i ? "," : "") + j;
    }
    sse += "data: [DONE]\n\n";
    array += "]";
    std::string big_event = "data: " + std::string(8u << 20, 'x') + "\n\n";
    std::string big_element = "[{\"text\":\"" + std::string(8u << 20, 'x') + "\"}]";

    std::printf("# decoder throughput, single thread; input fed in pieces of the given size\n");
    std::printf("%-12s %-28s %10s %10s %10s\n", "decoder", "input", "piece", "MiB/s", "events");
    struct Case {
        const char* name;
        std::function<std::unique_ptr<Decoder>()> make;
        const std::string* input;
        const char* label;
        std::size_t piece;
        int rounds;
    };
    std::vector<Case> cases = {
        {"sse", [] { return make_sse_decoder(); }, &sse, "32 MiB OpenAI chunks", 16384, 5},
        {"sse", [] { return make_sse_decoder(); }, &sse, "32 MiB OpenAI chunks", 1400, 5},
        {"ndjson", [] { return make_ndjson_decoder(); }, &ndjson, "32 MiB OpenAI chunks", 16384, 5},
        {"json_array", [] { return make_json_array_decoder(); }, &array, "32 MiB OpenAI chunks",
         16384, 5},
        {"sse", [] { return make_sse_decoder(); }, &big_event, "one 8 MiB event", 1400, 10},
        {"json_array", [] { return make_json_array_decoder(); }, &big_element, "one 8 MiB element",
         1400, 10},
    };
    for (const auto& c : cases) {
        std::size_t events = 0;
        double rate = run(c.make, *c.input, c.piece, c.rounds, events);
        std::printf("%-12s %-28s %10zu %10.1f %10zu\n", c.name, c.label, c.piece, rate, events);
    }
    return 0;
}
