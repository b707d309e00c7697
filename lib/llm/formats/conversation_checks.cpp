// What the providers refuse of a conversation's shape
// (formats/conversation_checks.hpp).

#include "formats/conversation_checks.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "formats/request_json.hpp"
#include "json/ascii.hpp"

namespace nous::llm::detail {

std::optional<Error> image_detail_check(const ChatRequest& request, const WireFormat& format,
                                        bool has_detail) {
    for (const ChatMessage& m : request.messages)
        for (const ContentPart& part : m.parts) {
            if (part.kind != ContentPart::Kind::image || part.detail.empty()) continue;
            if (!has_detail) return unsupported("an image detail", format);
            if (part.detail != "auto" && part.detail != "low" && part.detail != "high")
                return Error(
                    nous::http::ErrorCode::invalid_argument,
                    "an image detail must be auto, low or high, not '" + part.detail + "'");
        }
    return std::nullopt;
}

std::optional<Error> image_place_check(const ChatRequest& request, const WireFormat& format,
                                       ImagePlaces places) {
    for (std::size_t i = 0; i < request.messages.size(); ++i) {
        const ChatMessage& m = request.messages[i];
        const bool carried = m.role == "user" || (m.role == "system" && places.system) ||
                             (m.role == "assistant" && places.assistant);
        if (carried) continue;
        for (const ContentPart& part : m.parts)
            if (part.kind == ContentPart::Kind::image)
                return Error(nous::http::ErrorCode::invalid_argument,
                             "message " + std::to_string(i) + ": " + std::string(format.name()) +
                                 " takes no image in a " + m.role +
                                 " message (refused before sending, never dropped)");
    }
    return std::nullopt;
}

std::optional<Error> tool_pairing_check(const ChatRequest& r, bool results_may_answer_stored_calls,
                                        bool results_first) {
    // Most requests hold no call and no result: nothing to pair, no turns built.
    if (std::none_of(r.messages.begin(), r.messages.end(), [](const ChatMessage& m) {
            return m.role == "tool" || !m.tool_calls.empty();
        }))
        return std::nullopt;
    std::vector<std::vector<const ChatMessage*>> turns;
    std::vector<bool> model_turn;
    for_each_turn(r, "assistant",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      turns.push_back(turn);
                      model_turn.push_back(role == "assistant");
                  });
    auto index = [&](const ChatMessage* m) {
        return std::to_string(static_cast<std::size_t>(m - r.messages.data()));
    };
    auto id = [](const std::string& text) { return quoted_if_printable(text, "(unprintable)"); };
    auto answers = [](const std::vector<const ChatMessage*>& turn, const std::string& call) {
        return std::any_of(turn.begin(), turn.end(), [&](const ChatMessage* m) {
            return m->role == "tool" && m->tool_call_id == call;
        });
    };
    auto calls = [](const std::vector<const ChatMessage*>& turn, const std::string& result) {
        return std::any_of(turn.begin(), turn.end(), [&](const ChatMessage* m) {
            return std::any_of(m->tool_calls.begin(), m->tool_calls.end(),
                               [&](const ToolCall& c) { return c.id == result; });
        });
    };
    static const std::vector<const ChatMessage*> kNone;
    for (std::size_t t = 0; t < turns.size(); ++t) {
        const auto& next = t + 1 < turns.size() && !model_turn[t + 1] ? turns[t + 1] : kNone;
        const auto& before = t > 0 && model_turn[t - 1] ? turns[t - 1] : kNone;
        bool other_before = false;  // a message of this turn before a result
        for (const ChatMessage* m : turns[t]) {
            if (results_first && m->role == "tool" && other_before &&
                calls(before, m->tool_call_id))
                return Error(nous::http::ErrorCode::invalid_argument,
                             "message " + index(m) + ": the tool result for " +
                                 id(m->tool_call_id) +
                                 " comes after other messages of its turn: the results must "
                                 "come first after the calls");
            other_before = other_before || m->role != "tool";
            if (model_turn[t])
                for (const ToolCall& call : m->tool_calls)
                    if (!answers(next, call.id))
                        return Error(nous::http::ErrorCode::invalid_argument,
                                     "message " + index(m) + ": tool call " + id(call.id) +
                                         " has no result in the turn after it");
            if (m->role == "tool" && !results_may_answer_stored_calls &&
                !calls(before, m->tool_call_id))
                return Error(nous::http::ErrorCode::invalid_argument,
                             "message " + index(m) + ": the tool result for " +
                                 id(m->tool_call_id) + " answers no call of the turn before it");
        }
    }
    return std::nullopt;
}

bool has_content(const ChatMessage& m, RedactedReasoning redacted) {
    if (m.role == "tool" || !m.content.empty() || !m.tool_calls.empty() ||
        !m.reasoning.signature.empty() ||
        (redacted == RedactedReasoning::sent && !m.reasoning.redacted.empty()))
        return true;
    for (const ContentPart& part : m.parts)
        if (part.kind != ContentPart::Kind::text || !part.text.empty()) return true;
    return false;
}

std::optional<Error> empty_turn_check(const ChatRequest& r, const WireFormat& format,
                                      std::string_view model_role,
                                      bool final_model_turn_may_be_empty,
                                      RedactedReasoning redacted) {
    struct Seen {
        std::string_view role;
        std::size_t first;  ///< the index of its first message
        bool empty;
    };
    std::vector<Seen> turns;
    for_each_turn(
        r, model_role, [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
            const bool empty = std::none_of(turn.begin(), turn.end(), [&](const ChatMessage* m) {
                return has_content(*m, redacted);
            });
            turns.push_back(
                {role, static_cast<std::size_t>(turn.front() - r.messages.data()), empty});
        });
    // No turn at all (a system prompt alone): "messages must have at least
    // one element", "contents is not specified".
    if (turns.empty())
        return Error(nous::http::ErrorCode::invalid_argument,
                     "no messages: " + std::string(format.name()) +
                         " takes a conversation of one message at least (a system prompt alone "
                         "is none)");
    for (std::size_t i = 0; i < turns.size(); ++i) {
        if (!turns[i].empty) continue;
        if (final_model_turn_may_be_empty && i + 1 == turns.size() && turns[i].role == model_role)
            continue;
        return Error(nous::http::ErrorCode::invalid_argument,
                     "message " + std::to_string(turns[i].first) +
                         " is empty: " + std::string(format.name()) +
                         " takes no turn without text, an image, a tool call or a tool result "
                         "(reasoning goes back only with its signature)");
    }
    return std::nullopt;
}

}  // namespace nous::llm::detail
