#pragma once
// The token events Anthropic and the Responses API share a shape for: a
// text or reasoning fragment, read without a document (nous_llm internal).

#include <optional>
#include <string_view>
#include <vector>

#include "json/event_json.hpp"
#include "nous/llm/delta.hpp"

namespace nous::llm::detail {

/// The delta the document path makes of a text or reasoning token event,
/// or, when the caller asked and it is bare text, that text viewed in
/// `text_only`. An empty fragment adds nothing, as the document path finds.
inline void hand_out_text_delta(const EventJson::TextDelta& delta, std::vector<Delta>& out,
                                std::optional<std::string_view>* text_only) {
    if (text_only && !delta.reasoning && !delta.text.empty()) {
        *text_only = delta.text;
        return;
    }
    if (delta.text.empty()) return;
    Delta& d = out.emplace_back();  // in place: a token's wake-up finds this memory cold
    (delta.reasoning ? d.reasoning : d.text).assign(delta.text);
}

}  // namespace nous::llm::detail
