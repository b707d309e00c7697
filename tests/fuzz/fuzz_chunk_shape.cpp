// libFuzzer: the OpenAI chunk reader's shape (lib/llm/json/event_json.hpp). Any
// bytes, cut at each 0x1E byte into a stream of chunk texts: each text read
// by one reader across the stream (which reads a chunk of the last plain
// chunk's shape without a scan) gives exactly what a fresh reader's scan
// gives. The scan is held to the document read by fuzz_json_scan and
// fuzz_llm_deltas.

#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "llm/json/event_json.hpp"
#include "openai_chunk_check.hpp"

using nous::llm::detail::EventJson;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> texts;  // exact-size copies: ASan sees a read past one
    for (std::size_t from = 0;;) {
        const std::size_t cut = bytes.find('\x1e', from);
        texts.emplace_back(bytes.substr(from, cut == std::string_view::npos ? cut : cut - from));
        if (cut == std::string_view::npos) break;
        from = cut + 1;
    }
    EventJson stream;
    for (const std::string& text : texts) {
        EventJson fresh;
        EventJson::OpenAIChunk by_stream, by_scan;
        const bool accepted = stream.openai_chunk(text, by_stream);
        nous::fuzz::require(nous::test::describe_chunk(accepted, by_stream) ==
                            nous::test::describe_chunk(fresh.openai_chunk(text, by_scan), by_scan));
    }
    return 0;
}
