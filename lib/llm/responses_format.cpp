// The OpenAI Responses API's stream events and whole responses into Deltas.
// Output items are keyed by output_index: a function_call item's
// `.added` brings its call id and name, `function_call_arguments.delta` its
// arguments, `.done` the whole item (arguments taken from it only when no
// delta brought any). Reasoning items bring their id and, when asked,
// `encrypted_content` (the signature sent back next turn); their text
// arrives as reasoning summary or reasoning text deltas. There is no [DONE]:
// `response.completed`, `.incomplete` or `.failed` is the terminal signal.

#include <algorithm>

#include "provider_json.hpp"

namespace nous::llm::detail {

namespace {

/// A finished response object: its status as the finish reason (the
/// incomplete reason when there is one), usage, and an error when it failed.
void response_end(const Value& response, Delta& d) {
    d.end_of_message = true;
    d.finish_reason = string_member(response, "status");
    if (const Value* details = member(response, "incomplete_details"))
        if (auto reason = string_member(*details, "reason")) d.finish_reason = reason;
    if (const Value* usage = member(response, "usage"); usage && usage->IsObject())
        openai_style_usage(*usage, kResponsesUsage, d);
    if (const Value* error = member(response, "error"); error && error->IsObject())
        d.error = error_text(*error);
}

/// A reasoning item's id and encrypted content; its summary text when `with_text`.
void reasoning_item(const Value& item, Delta& d, bool with_text) {
    d.reasoning_id = string_member(item, "id").value_or("");
    d.reasoning_signature = string_member(item, "encrypted_content").value_or("");
    if (!with_text) return;
    for (const char* key : {"summary", "content"}) {
        const Value* parts = member(item, key);
        if (!parts || !parts->IsArray()) continue;
        for (const Value& part : parts->GetArray()) {
            if (auto text = string_member(part, "text")) {
                if (!d.reasoning.empty()) d.reasoning += "\n\n";
                d.reasoning += *text;
            }
        }
        if (!d.reasoning.empty()) break;  // the summary, else the raw text
    }
}

ToolCallDelta call_of(const Value& item, std::int64_t index) {
    ToolCallDelta t;
    t.index = index;
    t.id = string_member(item, "call_id").value_or("");
    t.name = string_member(item, "name").value_or("");
    return t;
}

}  // namespace

void responses_event(const Value& doc, ResponsesState& state, std::vector<Delta>& out) {
    const std::string_view type = view_member(doc, "type");
    const std::int64_t index = int_member(doc, "output_index").value_or(0);
    Delta d;
    if (type == "response.output_text.delta") {
        d.text = string_member(doc, "delta").value_or("");
    } else if (type == "response.reasoning_summary_text.delta" ||
               type == "response.reasoning_text.delta") {
        d.reasoning = string_member(doc, "delta").value_or("");
    } else if (type == "response.reasoning_summary_part.added") {
        // Summary parts are paragraphs: a blank line between them.
        if (state.summary_parts++ > 0) d.reasoning = "\n\n";
    } else if (type == "response.output_item.added" || type == "response.output_item.done") {
        const Value* item = member(doc, "item");
        if (!item) return;
        const auto kind = string_member(*item, "type").value_or("");
        if (kind == "function_call") {
            ToolCallDelta t = call_of(*item, index);
            const bool had_deltas =
                std::find(state.calls_with_arguments.begin(), state.calls_with_arguments.end(),
                          index) != state.calls_with_arguments.end();
            if (type == "response.output_item.done" && !had_deltas)
                t.arguments = string_member(*item, "arguments").value_or("");
            d.tool_calls.push_back(std::move(t));
        } else if (kind == "reasoning") {
            reasoning_item(*item, d, /*with_text=*/false);  // the text came as deltas
        }
    } else if (type == "response.function_call_arguments.delta") {
        ToolCallDelta t;
        t.index = index;
        t.arguments = string_member(doc, "delta").value_or("");
        if (!t.arguments.empty() &&
            std::find(state.calls_with_arguments.begin(), state.calls_with_arguments.end(),
                      index) == state.calls_with_arguments.end())
            state.calls_with_arguments.push_back(index);
        d.tool_calls.push_back(std::move(t));
    } else if (type == "response.completed" || type == "response.incomplete" ||
               type == "response.failed") {
        if (const Value* response = member(doc, "response")) response_end(*response, d);
        d.end_of_message = true;
        if (type == "response.failed" && !d.error) d.error = std::string("response failed");
    } else if (type == "error") {
        d.error = error_text(doc);
    } else {
        return;  // created, in_progress, content parts, .done echoes, keepalive, unknown
    }
    if (adds_something(d)) out.push_back(std::move(d));
}

std::optional<Error> responses_whole(const Value& doc, std::vector<Delta>& out) {
    if (const Value* error = member(doc, "error"); error && error->IsObject()) {
        Delta d;
        d.error = error_text(*error);
        out.push_back(std::move(d));
        return std::nullopt;
    }
    const Value* output = member(doc, "output");
    if (!output || !output->IsArray()) return malformed("a Responses response without output");
    std::int64_t index = 0;
    for (const Value& item : output->GetArray()) {
        Delta d;
        const auto kind = string_member(item, "type").value_or("");
        if (kind == "message") {
            if (const Value* content = member(item, "content"); content && content->IsArray())
                for (const Value& part : content->GetArray())
                    if (string_member(part, "type") == std::optional<std::string>("output_text"))
                        d.text += string_member(part, "text").value_or("");
        } else if (kind == "function_call") {
            ToolCallDelta t = call_of(item, index);
            t.arguments = string_member(item, "arguments").value_or("");
            d.tool_calls.push_back(std::move(t));
        } else if (kind == "reasoning") {
            reasoning_item(item, d, /*with_text=*/true);
        }
        ++index;
        out.push_back(std::move(d));
    }
    Delta end;
    response_end(doc, end);
    out.push_back(std::move(end));
    return std::nullopt;
}

}  // namespace nous::llm::detail
