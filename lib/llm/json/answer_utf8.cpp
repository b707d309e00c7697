// The UTF-8 check of what a provider answers past ASCII (answer_utf8.hpp).

#include "json/answer_utf8.hpp"

#include <string>

#include "json/provider_json.hpp"
#include "json/utf8_check.hpp"

namespace nous::llm::detail {

namespace {

std::optional<Error> check(const char* field, std::string_view s) {
    if (auto at = first_invalid_utf8(s))
        return malformed("the " + std::string(field) + " is not UTF-8 at byte " +
                         std::to_string(*at));
    return std::nullopt;
}

std::optional<Error> non_utf8_field(const Delta& d) {
    for (auto [field, s] : {std::pair{"text", &d.text},
                            {"reasoning", &d.reasoning},
                            {"reasoning signature", &d.reasoning_signature},
                            {"reasoning id", &d.reasoning_id},
                            {"redacted reasoning", &d.reasoning_redacted},
                            {"refusal", &d.refusal}})
        if (auto e = check(field, *s)) return e;
    for (const ToolCallDelta& t : d.tool_calls)
        for (auto [field, s] : {std::pair{"tool call id", &t.id},
                                {"tool name", &t.name},
                                {"tool arguments", &t.arguments},
                                {"tool call signature", &t.signature}})
            if (auto e = check(field, *s)) return e;
    if (d.finish_reason)
        if (auto e = check("finish reason", *d.finish_reason)) return e;
    if (d.error)
        if (auto e = check("error message", *d.error)) return e;
    return std::nullopt;
}

}  // namespace

std::optional<Error> non_utf8_answer(std::span<const Delta> deltas, std::string_view text) {
    if (auto e = check("text", text)) return e;
    for (const Delta& d : deltas)
        if (auto e = non_utf8_field(d)) return e;
    return std::nullopt;
}

}  // namespace nous::llm::detail
