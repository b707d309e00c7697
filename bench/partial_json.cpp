// bench/partial_json: what reading a streamed structured answer costs. A
// ~100 KB JSON answer arrives in 4,000 deltas; nous::llm::PartialJson reads
// each delta once, with the partial value available after every one. Beside
// it: one whole-document parse of the final text (RapidJSON, the floor), and
// re-parsing the text so far at every delta, as the official SDKs' partial
// readers do (here with PartialJson itself, so that only the method differs).
// Single thread; the median of the repetitions; prints a table.

#include "nous/llm/partial_json.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "nous/http/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::string answer(std::size_t target_bytes) {
    std::string out = R"({"query":"travel plans","items":[)";
    for (int i = 0; out.size() < target_bytes; ++i) {
        if (i) out += ",";
        out += R"({"id":)" + std::to_string(i) + R"(,"name":"Item \u00e9 )" + std::to_string(i) +
               R"(","description":"A \"quoted\" description of the item, with some words to )"
               R"(make it the size of a model's sentence, caf\u00e9 and more.","score":)" +
               std::to_string(i % 100) + ".5" + R"(,"tags":["alpha","beta","gamma"],"ok":true})";
    }
    return out + "]}";
}

template <typename F>
double median_us(int reps, F&& run) {
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        run();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t bytes = argc > 1 ? std::stoul(argv[1]) : 100 * 1024;
    const std::size_t deltas = argc > 2 ? std::stoul(argv[2]) : 4000;
    const std::string text = answer(bytes);
    const std::size_t step = std::max<std::size_t>(1, text.size() / deltas);
    std::vector<std::string_view> pieces;
    for (std::size_t at = 0; at < text.size(); at += step)
        pieces.push_back(std::string_view(text).substr(at, step));

    std::size_t sink = 0;
    const double whole = median_us(31, [&] {
        auto doc = nous::http::parse_json(text);
        sink += doc ? 1 : 0;
    });
    const double incremental = median_us(31, [&] {
        nous::llm::PartialJson reader;
        for (auto piece : pieces) {
            reader.feed(piece);
            sink += reader.value().members.size();  // the partial value, read after each delta
        }
        sink += reader.finish() ? 1 : 0;
    });
    const double reparse = median_us(3, [&] {
        std::size_t end = 0;
        for (auto piece : pieces) {
            end += piece.size();
            nous::llm::PartialJson reader;  // the text so far, from its start
            reader.feed(std::string_view(text).substr(0, end));
            sink += reader.value().members.size();
        }
    });
    std::printf("# a %zu-byte JSON answer in %zu deltas; median of the runs, one thread\n",
                text.size(), pieces.size());
    std::printf("%-44s %12s %10s %12s\n", "method", "total us", "MB/s", "x whole");
    auto row = [&](const char* name, double us) {
        std::printf("%-44s %12.1f %10.1f %12.2f\n", name, us, text.size() / us, us / whole);
    };
    row("one whole-document parse (RapidJSON DOM)", whole);
    row("PartialJson, incremental (value each delta)", incremental);
    row("re-parse the text so far at every delta", reparse);
    return sink == 0 ? 1 : 0;
}
