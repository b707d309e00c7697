#pragma once
// The OpenAI chunk reader's answer as one comparable string: whether it took
// the chunk, then its content, reasoning, finish reason and usage. Shared by
// tests/llm_test.cpp and tests/fuzz/fuzz_chunk_shape.cpp, which compare a
// stream's reading (its chunk shape) with a fresh reader's scan.

#include <string>
#include <string_view>

#include "llm/json/event_json.hpp"

namespace nous::test {

inline std::string describe_chunk(bool accepted,
                                  const nous::llm::detail::EventJson::OpenAIChunk& c) {
    if (!accepted) return "refused";
    auto field = [](bool has, std::string_view v) {
        return has ? "[" + std::string(v) + "]" : std::string("-");
    };
    auto count = [](const std::optional<std::int64_t>& n) {
        return n ? std::to_string(*n) : std::string("-");
    };
    return field(c.has_content, c.content) + field(c.has_reasoning_content, c.reasoning_content) +
           field(c.has_reasoning, c.reasoning) + field(c.has_finish_reason, c.finish_reason) +
           (c.has_usage ? "usage " + count(c.input_tokens) + "/" + count(c.output_tokens) + "/" +
                              count(c.cached_input_tokens) + "/" + count(c.reasoning_tokens)
                        : std::string());
}

}  // namespace nous::test
