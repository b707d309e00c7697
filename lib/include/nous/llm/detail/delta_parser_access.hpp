#pragma once
// What DeltaParser offers only to nous_llm's own loop, its tests, fuzz
// targets and benchmarks: not part of the API a user reads (nous/llm/chat.hpp).

#include <optional>
#include <string_view>
#include <vector>

#include "nous/llm/delta.hpp"

namespace nous::llm::detail {

struct DeltaParserAccess {
    /// DeltaParser::parse, with the commonest event kept out of `out`: when
    /// the event's whole delta is one Delta with nothing but its text (an
    /// OpenAI content chunk, its text possibly empty; an Anthropic text_delta
    /// or a Responses output_text delta, never empty), `text_only` views that
    /// text (valid until the next call, like the event) and `out` is left
    /// alone; otherwise `text_only` is empty and the deltas are appended. A
    /// stream's loop then reuses one Delta for those events (run_chat).
    static std::optional<Error> parse(DeltaParser& parser, const nous::http::EventView& event,
                                      std::vector<Delta>& out,
                                      std::optional<std::string_view>& text_only) {
        text_only.reset();
        return parser.parse_event(event, out, &text_only);
    }
    /// Off: every event is read through a document, so that the format's fast
    /// reader can be compared with it (tests, fuzzing, bench/delta_parser).
    static void use_fast_paths(DeltaParser& parser, bool on) noexcept { parser.fast_paths_ = on; }
};

}  // namespace nous::llm::detail
