// The OpenAI Responses API (POST {base}/responses): its request, its
// stream events, its whole response.
// Output items are keyed by output_index: a function_call item's
// `.added` brings its call id and name, `function_call_arguments.delta` its
// arguments, `.done` the whole item (arguments taken from it only when no
// delta brought any). Reasoning items bring their id and, when asked,
// `encrypted_content` (the signature sent back next turn); their text
// arrives as reasoning summary or reasoning text deltas. There is no [DONE]:
// `response.completed`, `.incomplete` or `.failed` is the terminal signal;
// `keepalive` events are not content.

#include <algorithm>

#include "embeddings/embedding_format.hpp"
#include "formats/prompt_cache.hpp"
#include "formats/request_json.hpp"
#include "formats/text_delta.hpp"
#include "formats/wire_format.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

/// What a Responses stream's reader keeps between events.
struct ResponsesState {
    /// Calls whose arguments arrived as deltas (their `.done` item must not add them again).
    std::vector<std::int64_t> calls_with_arguments;
    std::int64_t summary_parts = 0;  ///< reasoning summary parts seen (joined by blank lines)
};

// ---- OpenAI Responses API --------------------------------------------------------
// `instructions` for the system prompt; input items: messages (input_text /
// input_image parts), an assistant's reasoning item (when it came from this
// API: it has the item's id, which the request type requires; another
// provider's reasoning and signature mean nothing here and are not sent, as
// chat completions sends none), its text, its `function_call`s, and each
// result as `function_call_output`.

void responses_input(Writer& w, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        key_string(w, "type", "function_call_output");
        key_string(w, "call_id", wire_tool_id(m.tool_call_id, kResponsesIds));
        key_string(w, "output", text_of(m));
        w.EndObject();
        return;
    }
    if (m.role == "assistant") {
        if (!m.reasoning.id.empty()) {
            w.StartObject();
            key_string(w, "type", "reasoning");
            key_string(w, "id", m.reasoning.id);
            w.Key("summary");
            w.StartArray();
            if (!m.reasoning.text.empty()) {
                w.StartObject();
                key_string(w, "type", "summary_text");
                key_string(w, "text", m.reasoning.text);
                w.EndObject();
            }
            w.EndArray();
            if (!m.reasoning.signature.empty())
                key_string(w, "encrypted_content", m.reasoning.signature);
            w.EndObject();
        }
        // Its text parts too (image_place_check refused any image).
        if (const std::string text = text_of(m); !text.empty()) {
            w.StartObject();
            key_string(w, "role", "assistant");
            key_string(w, "content", text);
            w.EndObject();
        }
        for (const ToolCall& call : m.tool_calls) {
            w.StartObject();
            key_string(w, "type", "function_call");
            key_string(w, "call_id", wire_tool_id(call.id, kResponsesIds));
            key_string(w, "name", call.name);
            key_string(w, "arguments", call.arguments.empty() ? "{}" : call.arguments);
            w.EndObject();
        }
        return;
    }
    w.StartObject();
    key_string(w, "role", m.role);
    w.Key("content");
    if (m.parts.empty()) {
        string(w, m.content);
    } else {
        w.StartArray();
        if (!m.content.empty()) {
            w.StartObject();
            key_string(w, "type", "input_text");
            key_string(w, "text", m.content);
            w.EndObject();
        }
        for (const ContentPart& part : m.parts) {
            w.StartObject();
            if (part.kind == ContentPart::Kind::text) {
                key_string(w, "type", "input_text");
                key_string(w, "text", part.text);
            } else {
                key_string(w, "type", "input_image");
                key_string(w, "image_url", image_url_of(part));
                // Required by the request type; the API's own default.
                key_string(w, "detail", part.detail.empty() ? "auto" : part.detail);
            }
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
}

void responses_body(Writer& w, const ChatRequest& r, const RequestJson& parsed) {
    w.StartObject();
    key_string(w, "model", r.model);
    if (!r.system.empty()) key_string(w, "instructions", r.system);
    w.Key("input");
    w.StartArray();
    for (const auto& m : r.messages) responses_input(w, m);
    w.EndArray();
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    if (r.max_tokens) {
        w.Key("max_output_tokens");
        w.Int(*r.max_tokens);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) {
        w.Key("reasoning");
        w.StartObject();
        key_string(w, "effort", effort_name(*r.reasoning_effort));
        key_string(w, "summary", "auto");  // the reasoning's text, summarised
        w.EndObject();
        // The reasoning comes back encrypted, so that the next turn can send it
        // without server-side storage.
        w.Key("include");
        w.StartArray();
        string(w, "reasoning.encrypted_content");
        w.EndArray();
    }
    if (r.top_p) {
        w.Key("top_p");
        w.Double(*r.top_p);
    }
    write_openai_tool_choice(w, r, OpenAIShape::responses);
    if (r.response_format) {
        w.Key("text");
        w.StartObject();
        w.Key("format");
        write_openai_format(w, *r.response_format, parsed, OpenAIShape::responses);
        w.EndObject();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            tool_object(w, r.tools[i], *parsed.tools[i], "parameters", "function", true);
        w.EndArray();
    }
    w.EndObject();
}

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

void responses_event(const Value& doc, ResponsesState& state, std::vector<Delta>& out) {
    const std::string_view type = view_member(doc, "type");
    const std::int64_t index = int_member(doc, "output_index").value_or(0);
    Delta d;
    if (type == "response.output_text.delta") {
        d.text = string_member(doc, "delta").value_or("");
    } else if (type == "response.refusal.delta") {
        d.refusal = string_member(doc, "delta").value_or("");
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
            if (const Value* content = member(item, "content"); content && content->IsArray()) {
                for (const Value& part : content->GetArray()) {
                    const std::string_view part_type = view_member(part, "type");
                    if (part_type == "output_text")
                        d.text += string_member(part, "text").value_or("");
                    else if (part_type == "refusal")
                        d.refusal += string_member(part, "refusal").value_or("");
                }
            }
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

class ResponsesEvents final : public EventReader {
  public:
    bool read_fast(const nous::http::EventView&, std::string_view data, EventJson& json,
                   std::vector<Delta>& out, std::optional<std::string_view>* text_only) override {
        EventJson::TextDelta delta;
        if (!json.responses_delta(data, delta)) return false;
        hand_out_text_delta(delta, out, text_only);
        return true;
    }

    std::optional<Error> read_document(const nous::http::EventView&, const Value& root,
                                       std::vector<Delta>& out) override {
        if (!root.IsObject()) return malformed("a Responses event is not a JSON object");
        responses_event(root, state_, out);
        return std::nullopt;
    }

  private:
    ResponsesState state_;
};

/// The Responses API's least max_output_tokens.
constexpr std::int64_t kMinOutputTokens = 16;

class OpenAIResponses final : public WireFormat {
  public:
    /// The same /embeddings endpoint as chat completions.
    const EmbeddingFormat* embeddings() const noexcept override {
        return &openai_embedding_format();
    }
    Provider provider() const noexcept override { return Provider::openai_responses; }
    std::string_view name() const noexcept override { return "openai-responses"; }
    /// "between 0 and 2" (the SDK's request type).
    std::optional<double> max_temperature() const noexcept override { return 2.0; }
    std::string_view default_base_url() const noexcept override {
        return "https://api.openai.com/v1";
    }
    std::string_view default_api_key_env() const noexcept override { return "OPENAI_API_KEY"; }

    std::string url(const ChatRequest&, const std::string& base) const override {
        return base + "/responses";
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        // The Responses API has no stop sequences and no seed.
        if (!request.stop.empty()) return unsupported("stop", *this);
        if (request.seed) return unsupported("seed", *this);
        // Its max_output_tokens takes 16 or more ("integer below minimum
        // value"): a smaller limit is refused here, not raised behind the caller's back.
        if (request.max_tokens && *request.max_tokens < kMinOutputTokens)
            return Error(nous::http::ErrorCode::invalid_argument,
                         "max_tokens " + std::to_string(*request.max_tokens) + ": " +
                             std::string(name()) + " takes " + std::to_string(kMinOutputTokens) +
                             " or more (max_output_tokens)");
        return openai_request_check(request, parsed, *this);
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_bearer_auth(headers, request.api_key);
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        responses_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return write_openai_cache(body, request, *this);
    }
    std::optional<Error> count_request(const ChatRequest&, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        url = base + "/responses/input_tokens";
        // InputTokenCountParams: no sampling, output limit, stream or include.
        keep_members(
            body, {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
                   "reasoning", "text", "truncation", "conversation", "previous_response_id"});
        return std::nullopt;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return count_member(root, "input_tokens");
    }

    std::unique_ptr<EventReader> event_reader() const override {
        return std::make_unique<ResponsesEvents>();
    }
    std::string_view terminal_signal() const noexcept override { return "response.completed"; }
    bool has_keepalive_events() const noexcept override { return true; }

    std::optional<Error> read_whole(const Value& root, std::vector<Delta>& deltas) const override {
        if (!root.IsObject()) return malformed("a Responses response is not a JSON object");
        return responses_whole(root, deltas);
    }
};

}  // namespace

const WireFormat& openai_responses_format() noexcept {
    static const OpenAIResponses format;
    return format;
}

}  // namespace nous::llm::detail
