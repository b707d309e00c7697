// bench/delta_parser: what nous::llm::DeltaParser costs per event on the
// consumer's thread, in ns, for a real-sized OpenAI chunk (the fields
// api.openai.com sends today), an Anthropic text delta, a Responses API
// text delta and a Gemini chunk; each with the fast reader of common events and through a
// document. Single thread, a steady stream: the OpenAI chunks in turn carry
// different tokens and padding (as a stream's do: read from the stream's
// chunk shape), and again in turn with two shapes (each chunk then scanned).

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "nous/llm/chat.hpp"
#include "nous/llm/detail/delta_parser_access.hpp"

namespace {

double ns_per_event(nous::llm::Provider provider, const std::vector<nous::http::Event>& events,
                    bool fast, std::size_t rounds) {
    nous::llm::DeltaParser parser(provider);
    nous::llm::detail::DeltaParserAccess::use_fast_paths(parser, fast);
    std::vector<nous::llm::Delta> out;
    std::size_t text = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < rounds; ++i) {
        out.clear();
        if (parser.parse(events[i % events.size()], out)) return -1;
        for (const auto& d : out) text += d.text.size() + d.reasoning.size();
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (text == 0) return -1;  // the event must have been read
    return ns / static_cast<double>(rounds);
}

/// api.openai.com's token chunk with this token and padding.
nous::http::Event openai_chunk(const char* token, const char* padding, bool fingerprint = true) {
    nous::http::Event e;
    e.data =
        std::string(
            R"({"id":"chatcmpl-BQ8nLkVbwOWtj5pQ2YGx0xR3uJm9s","object":"chat.completion.chunk","created":1745671234,)"
            R"("model":"gpt-4o-mini-2024-07-18","service_tier":"default",)") +
        (fingerprint ? R"("system_fingerprint":"fp_0392822090",)" : "") +
        R"("choices":[{"index":0,"delta":{"content":")" + token +
        R"("},"logprobs":null,"finish_reason":null}],"obfuscation":")" + padding + R"("})";
    return e;
}

}  // namespace

int main() {
    const std::vector<nous::http::Event> openai = {openai_chunk(" token", "a1b2"),
                                                   openai_chunk(" next", "Zq"),
                                                   openai_chunk(" one", "k3j4l5")};
    // Two shapes in turn: neither is ever the last chunk's.
    const std::vector<nous::http::Event> openai_two_shapes = {openai_chunk(" token", "a1b2"),
                                                              openai_chunk(" next", "Zq", false)};
    nous::http::Event anthropic;
    anthropic.type = "content_block_delta";
    anthropic.data =
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" token"}})";
    nous::http::Event responses;
    responses.data =
        R"({"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_67ccd3acc8d48190a77525dc6de64b4104becb25c5a5ad26",)"
        R"("output_index":0,"content_index":0,"delta":" token","logprobs":[],"obfuscation":"a1b2c3"})";
    // As generativelanguage.googleapis.com streams a token (alt=sse): usage on every chunk.
    nous::http::Event gemini;
    gemini.data =
        R"({"candidates": [{"content": {"parts": [{"text": " token"}],"role": "model"},"index": 0}],)"
        R"("usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 12,"totalTokenCount": 40,)"
        R"("promptTokensDetails": [{"modality": "TEXT","tokenCount": 8}],"thoughtsTokenCount": 20},)"
        R"("modelVersion": "gemini-2.5-flash","responseId": "x5ZPaNa2LbfY1PIPvpHnkAg"})";
    nous::http::Event gemini_thought;
    gemini_thought.data =
        R"({"candidates": [{"content": {"parts": [{"text": " thinking","thought": true}],"role": "model"},"index": 0}],)"
        R"("usageMetadata": {"promptTokenCount": 8,"totalTokenCount": 30,"thoughtsTokenCount": 22},)"
        R"("modelVersion": "gemini-2.5-flash","responseId": "x5ZPaNa2LbfY1PIPvpHnkAg"})";
    constexpr std::size_t rounds = 2'000'000;
    std::printf("# DeltaParser::parse, ns per event (single thread, %zu events each)\n", rounds);
    std::printf("%-40s %6s %8s\n", "event", "bytes", "ns");
    using nous::llm::Provider;
    struct Row {
        const char* name;
        Provider provider;
        std::vector<nous::http::Event> events;
        bool fast;  ///< the fast reader of common events on
    };
    const Row rows[] = {
        {"openai chunk (the stream's shape)", Provider::openai, openai, true},
        {"openai chunk (two shapes: scanned)", Provider::openai, openai_two_shapes, true},
        {"openai chunk (document read)", Provider::openai, openai, false},
        {"anthropic text_delta", Provider::anthropic, {anthropic}, true},
        {"anthropic text_delta (document read)", Provider::anthropic, {anthropic}, false},
        {"responses output_text.delta", Provider::openai_responses, {responses}, true},
        {"responses output_text.delta (document)", Provider::openai_responses, {responses}, false},
        {"gemini chunk", Provider::gemini, {gemini}, true},
        {"gemini chunk (document read)", Provider::gemini, {gemini}, false},
        {"gemini thought chunk", Provider::gemini, {gemini_thought}, true},
        {"gemini thought chunk (document read)", Provider::gemini, {gemini_thought}, false},
    };
    for (const Row& row : rows)
        std::printf("%-40s %6zu %8.0f\n", row.name, row.events[0].data.size(),
                    ns_per_event(row.provider, row.events, row.fast, rounds));
    return 0;
}
