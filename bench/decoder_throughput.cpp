// bench/decoder_throughput: MiB/s of the SSE, NDJSON and JSON-array decoders on
// typical OpenAI chunks, and on one 8 MiB event split into 1400-byte pieces;
// and the stream handle's whole per-event path (Stream::next_view over a
// source in memory) on small events, beside a memchr splitter of the same bytes.

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nous/http/backend.hpp"
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

/// The input in pieces, as a socket would hand them over.
class MemorySource final : public ChunkSource {
  public:
    MemorySource(const std::string& input, std::size_t piece) : input_(input), piece_(piece) {}
    Piece next() override {
        Piece p;
        if (pos_ >= input_.size()) return p;  // end
        p.kind = Piece::Kind::data;
        p.bytes = std::move(spare_);
        p.bytes.assign(input_, pos_, piece_);
        pos_ += piece_;
        return p;
    }
    void cancel() noexcept override {}
    void recycle(std::string&& bytes) noexcept override { spare_ = std::move(bytes); }

  private:
    const std::string& input_;
    std::size_t piece_, pos_ = 0;
    std::string spare_;
};

/// MiB/s of Stream::next_view over `input` in `piece`-byte pieces: every
/// event's data bytes counted (the view read, as a consumer would).
double stream_views(const std::string& input, std::size_t piece, int rounds, std::size_t& events) {
    auto t0 = std::chrono::steady_clock::now();
    std::size_t data_bytes = 0;
    for (int r = 0; r < rounds; ++r) {
        Stream s(std::make_unique<MemorySource>(input, piece), make_sse_decoder());
        events = 0;
        while (auto item = s.next_view()) {
            if (!item->is_event()) continue;
            ++events;
            data_bytes += item->event.data.size();
        }
    }
    if (data_bytes == 0) return 0;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(input.size()) * rounds / 1048576.0 / secs;
}

/// The reference: the same pieces (copied as a read would), events split at
/// "\n\n" with memchr, their data bytes counted; nothing else checked.
double memchr_split(const std::string& input, std::size_t piece, int rounds, std::size_t& events) {
    auto t0 = std::chrono::steady_clock::now();
    std::size_t data_bytes = 0;
    std::string buffer;
    for (int r = 0; r < rounds; ++r) {
        events = 0;
        std::size_t event_start = 0;  // of the current event, counted across pieces
        std::size_t offset = 0;
        char last = 0;
        for (std::size_t pos = 0; pos < input.size(); pos += piece) {
            buffer.assign(input, pos, piece);
            const char* p = buffer.data();
            const char* end = p + buffer.size();
            if (last == '\n' && p < end && *p == '\n') {
                ++events;
                data_bytes += offset - event_start;
                event_start = offset + 1;
            }
            for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\n', end - q)));
                 ++q) {
                if (q + 1 < end && q[1] == '\n') {
                    const std::size_t at = offset + static_cast<std::size_t>(q - p);
                    ++events;
                    data_bytes += at - event_start;
                    event_start = at + 2;
                }
            }
            last = buffer.empty() ? last : buffer.back();
            offset += buffer.size();
        }
    }
    if (data_bytes == 0) return 0;
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
    // The per-event path on small events: 48-byte OpenAI-style events
    // (the peer harness's), through the stream handle and through memchr.
    std::string small;
    const std::string event = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";
    while (small.size() < target) small += event;
    std::printf(
        "\n# %zu-byte events, 32 MiB in 16 KiB pieces: the stream handle's per-event path\n",
        event.size());
    std::printf("%-28s %10s %10s %10s\n", "path", "MiB/s", "events", "x memchr");
    std::size_t e1 = 0, e2 = 0;
    const double split = memchr_split(small, 16384, 5, e1);
    const double views = stream_views(small, 16384, 5, e2);
    std::printf("%-28s %10.1f %10zu %10.2f\n", "memchr split (reference)", split, e1, 1.0);
    std::printf("%-28s %10.1f %10zu %10.2f\n", "Stream::next_view (SSE)", views, e2, views / split);
    return 0;
}
