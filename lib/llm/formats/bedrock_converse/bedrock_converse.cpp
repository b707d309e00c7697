// Bedrock Converse: its request, its stream events (read from the AWS event
// stream: messageStart, contentBlockStart, contentBlockDelta,
// contentBlockStop, messageStop, metadata, and the exceptions), its whole
// response, and its errors. The model goes in the URL, never in the body.
// Where the call goes and how it is signed (the region, SigV4 or a bearer)
// is the platform's (platforms/bedrock.cpp). docs/platforms.md holds the
// mapping table.

#include "formats/bedrock_converse/bedrock_converse.hpp"

#include <string_view>

#include "formats/conversation_checks.hpp"
#include "formats/request_json.hpp"
#include "formats/schema_dialects.hpp"
#include "formats/text_delta.hpp"
#include "formats/wire_format.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

/// "png" of "image/png": the image formats Converse takes; "" for any other.
std::string_view image_format(std::string_view media_type) {
    for (std::string_view f : {"png", "jpeg", "gif", "webp"})
        if (media_type == "image/" + std::string(f)) return f;
    if (media_type == "image/jpg") return "jpeg";
    return {};
}

void text_block(Writer& w, std::string_view text) {
    w.StartObject();
    key_string(w, "text", text);
    w.EndObject();
}

/// The blocks one message adds to its turn: a tool's result; or reasoning
/// (with its signature), text, images, tool uses. An empty text is left
/// out: Converse refuses a text block without a character.
void converse_blocks(Writer& w, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        w.Key("toolResult");
        w.StartObject();
        key_string(w, "toolUseId", wire_tool_id(m.tool_call_id, kBedrockIds));
        w.Key("content");
        w.StartArray();
        const std::string result = text_of(m);
        text_block(w, result.empty() ? std::string_view(" ") : std::string_view(result));
        w.EndArray();
        if (m.is_error) key_string(w, "status", "error");
        w.EndObject();
        w.EndObject();
        return;
    }
    if (m.role == "assistant" && !m.reasoning.signature.empty()) {
        w.StartObject();
        w.Key("reasoningContent");
        w.StartObject();
        w.Key("reasoningText");
        w.StartObject();
        key_string(w, "text", m.reasoning.text);
        key_string(w, "signature", m.reasoning.signature);
        w.EndObject();
        w.EndObject();
        w.EndObject();
    }
    if (m.role == "assistant")
        for (const std::string& data : m.reasoning.redacted) {
            w.StartObject();
            w.Key("reasoningContent");
            w.StartObject();
            key_string(w, "redactedContent", data);  // a blob: base64 in JSON, as it came
            w.EndObject();
            w.EndObject();
        }
    if (!m.content.empty()) text_block(w, m.content);
    for (const ContentPart& part : m.parts) {
        if (part.kind == ContentPart::Kind::text) {
            if (!part.text.empty()) text_block(w, part.text);
            continue;
        }
        w.StartObject();
        w.Key("image");
        w.StartObject();
        key_string(w, "format", image_format(part.media_type));
        w.Key("source");
        w.StartObject();
        key_string(w, "bytes", part.data);  // a blob: base64 in JSON
        w.EndObject();
        w.EndObject();
        w.EndObject();
    }
    for (const ToolCall& call : m.tool_calls) {
        w.StartObject();
        w.Key("toolUse");
        w.StartObject();
        key_string(w, "toolUseId", wire_tool_id(call.id, kBedrockIds));
        key_string(w, "name", call.name);
        w.Key("input");
        arguments_object(w, call.arguments);
        w.EndObject();
        w.EndObject();
    }
}

bool has_tool_blocks(const ChatRequest& r) {
    for (const ChatMessage& m : r.messages)
        if (m.role == "tool" || !m.tool_calls.empty()) return true;
    return false;
}

bool tools_sent(const ChatRequest& r) {
    return !r.tools.empty() && !(r.tool_choice && r.tool_choice->mode == ToolChoice::Mode::none);
}

void converse_body(Writer& w, const ChatRequest& r, const RequestJson& parsed) {
    w.StartObject();
    w.Key("messages");
    w.StartArray();
    for_each_turn(r, "assistant",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      w.StartObject();
                      key_string(w, "role", role);
                      w.Key("content");
                      w.StartArray();
                      for (const ChatMessage* m : turn) converse_blocks(w, *m);
                      w.EndArray();
                      w.EndObject();
                  });
    w.EndArray();
    if (const std::string system = joined_system(r); !system.empty()) {
        w.Key("system");
        w.StartArray();
        text_block(w, system);
        w.EndArray();
    }
    if (r.max_tokens || r.temperature || r.top_p || !r.stop.empty()) {
        w.Key("inferenceConfig");
        w.StartObject();
        if (r.max_tokens) {
            w.Key("maxTokens");
            w.Int(*r.max_tokens);
        }
        if (r.temperature) {
            w.Key("temperature");
            w.Double(*r.temperature);
        }
        if (r.top_p) {
            w.Key("topP");
            w.Double(*r.top_p);
        }
        if (!r.stop.empty()) {
            w.Key("stopSequences");
            string_array(w, r.stop);
        }
        w.EndObject();
    }
    if (tools_sent(r)) {
        w.Key("toolConfig");
        w.StartObject();
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i) {
            const ToolSpec& tool = r.tools[i];
            w.StartObject();
            w.Key("toolSpec");
            w.StartObject();
            key_string(w, "name", tool.name);
            if (!tool.description.empty()) key_string(w, "description", tool.description);
            w.Key("inputSchema");
            w.StartObject();
            w.Key("json");
            typed_tool_schema(w, *parsed.tools[i]);
            w.EndObject();
            if (tool.strict) {
                w.Key("strict");
                w.Bool(true);
            }
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        if (r.tool_choice && r.tool_choice->mode != ToolChoice::Mode::automatic) {
            w.Key("toolChoice");
            w.StartObject();
            if (r.tool_choice->mode == ToolChoice::Mode::named) {
                w.Key("tool");
                w.StartObject();
                key_string(w, "name", r.tool_choice->name);
                w.EndObject();
            } else {
                w.Key("any");
                w.StartObject();
                w.EndObject();
            }
            w.EndObject();
        } else if (r.tool_choice) {
            w.Key("toolChoice");
            w.StartObject();
            w.Key("auto");
            w.StartObject();
            w.EndObject();
            w.EndObject();
        }
        w.EndObject();
    }
    if (r.response_format || r.reasoning_effort) {
        w.Key("outputConfig");
        w.StartObject();
        if (r.response_format) {
            w.Key("textFormat");
            w.StartObject();
            key_string(w, "type", "json_schema");
            w.Key("structure");
            w.StartObject();
            w.Key("jsonSchema");
            w.StartObject();
            // The service model's schema is a string: the schema as JSON text.
            key_string(w, "schema", compact(*parsed.response_schema));
            key_string(w, "name", r.response_format->name);
            w.EndObject();
            w.EndObject();
            w.EndObject();
        }
        if (r.reasoning_effort) key_string(w, "effort", effort_name(*r.reasoning_effort));
        w.EndObject();
    }
    w.EndObject();
}

/// Converse usage in the shared meaning (Usage): like Anthropic's, its
/// inputTokens leaves the cache reads and writes out, so the input is the three summed.
void converse_usage(const Value& usage, Delta& d) {
    const std::int64_t read = int_member(usage, "cacheReadInputTokens").value_or(0);
    const std::int64_t written = int_member(usage, "cacheWriteInputTokens").value_or(0);
    if (auto input = int_member(usage, "inputTokens")) {
        d.input_tokens = *input + read + written;
        d.cached_input_tokens = read;
        d.cache_write_input_tokens = written;
    }
    d.output_tokens = int_member(usage, "outputTokens");
}

/// The words of an exception event's payload ({"message": ...}).
std::string exception_words(std::string_view type, const Value& root) {
    std::string words(type);
    if (auto message = string_member(root, "message"))
        words += ": " + *message;
    else if (auto capital = string_member(root, "Message"))
        words += ": " + *capital;
    return words;
}

void converse_event(std::string_view type, const Value& doc, std::vector<Delta>& out) {
    Delta d;
    if (type.starts_with("exception:")) {
        d.error = exception_words(type.substr(10), doc);
    } else if (type == "contentBlockStart") {
        const Value* start = member(doc, "start");
        const Value* use = start ? member(*start, "toolUse") : nullptr;
        if (!use) return;
        ToolCallDelta t;
        t.index = int_member(doc, "contentBlockIndex").value_or(0);
        t.id = string_member(*use, "toolUseId").value_or("");
        t.name = string_member(*use, "name").value_or("");
        d.tool_calls.push_back(std::move(t));
    } else if (type == "contentBlockDelta") {
        const Value* delta = member(doc, "delta");
        if (!delta) return;
        if (auto text = string_member(*delta, "text")) {
            d.text = std::move(*text);
        } else if (const Value* use = member(*delta, "toolUse")) {
            ToolCallDelta t;
            t.index = int_member(doc, "contentBlockIndex").value_or(0);
            t.arguments = string_member(*use, "input").value_or("");
            d.tool_calls.push_back(std::move(t));
        } else if (const Value* reasoning = member(*delta, "reasoningContent")) {
            d.reasoning = string_member(*reasoning, "text").value_or("");
            d.reasoning_signature = string_member(*reasoning, "signature").value_or("");
            d.reasoning_redacted = string_member(*reasoning, "redactedContent").value_or("");
        }
    } else if (type == "messageStop") {
        d.finish_reason = string_member(doc, "stopReason");
        d.end_of_message = true;
    } else if (type == "metadata") {
        if (const Value* usage = member(doc, "usage")) converse_usage(*usage, d);
    } else {
        return;  // messageStart, contentBlockStop, unknown: nothing to add
    }
    if (adds_something(d)) out.push_back(std::move(d));
}

class ConverseEvents final : public EventReader {
  public:
    bool read_fast(const nous::http::EventView& event, std::string_view data, EventJson& json,
                   std::vector<Delta>& out, std::optional<std::string_view>* text_only) override {
        EventJson::TextDelta delta;
        if (!json.converse_delta(data, event.type, delta)) return false;
        hand_out_text_delta(delta, out, text_only);
        return true;
    }
    std::optional<Error> read_document(const nous::http::EventView& event, const Value& root,
                                       std::vector<Delta>& out) override {
        if (!root.IsObject()) return malformed("a Bedrock Converse event is not a JSON object");
        converse_event(event.type, root, out);
        return std::nullopt;
    }
};

}  // namespace

std::optional<Error> converse_check(const ChatRequest& request, const RequestJson& parsed,
                                    const WireFormat& format) {
    if (request.seed) return unsupported("seed", format);
    if (request.parallel_tool_calls) return unsupported("parallel_tool_calls", format);
    if (request.cache && request.cache->automatic)
        return unsupported(
            "automatic prompt caching (Converse caches at cachePoint blocks: name "
            "the breakpoints, system, tools or last)",
            format);
    if (auto bad = tools_check(request, parsed, format, ToolNameRule::bedrock, anthropic_break))
        return bad;
    if (auto bad = tool_arguments_check(request, format)) return bad;
    if (auto bad = image_detail_check(request, format, false)) return bad;
    if (auto bad = image_place_check(request, format, ImagePlaces{false, true})) return bad;
    if (auto bad = empty_turn_check(request, format, "assistant", false, RedactedReasoning::sent))
        return bad;
    if (auto bad = tool_pairing_check(request, false, false)) return bad;
    for (const ChatMessage& m : request.messages)
        for (const ContentPart& part : m.parts) {
            if (part.kind != ContentPart::Kind::image) continue;
            if (!part.image_url.empty())
                return unsupported("an image by URL (Converse takes its bytes: a data: URL)",
                                   format);
            if (image_format(part.media_type).empty())
                return unsupported("an image of type '" + part.media_type +
                                       "' (png, jpeg, gif and webp are taken)",
                                   format);
        }
    // Converse refuses toolUse and toolResult blocks without a toolConfig
    // ("The toolConfig field must be defined when using toolUse and
    // toolResult content blocks"): a conversation replayed without its tools
    // (a summary's call, say) is refused here, before a byte goes out.
    if (has_tool_blocks(request) && !tools_sent(request))
        return unsupported(
            request.tools.empty()
                ? "tool calls or results in the conversation without tools (Converse needs the "
                  "tools those blocks name: offer them)"
                : "tool_choice none with tool calls in the conversation (Converse needs the tools "
                  "those blocks name; leave tool_choice unset)",
            format);
    if (!request.response_format) return std::nullopt;
    if (request.response_format->kind == ResponseFormat::Kind::json_object)
        return unsupported("a JSON response without a schema (json_object)", format);
    if (auto bad = anthropic_break(*parsed.response_schema))
        return schema_refused(bad->message(), format);
    return std::nullopt;
}

void converse_write_body(Writer& w, const ChatRequest& request, const RequestJson& parsed) {
    converse_body(w, request, parsed);
}

std::unique_ptr<EventReader> converse_event_reader() { return std::make_unique<ConverseEvents>(); }

std::optional<Error> converse_read_whole(const Value& root, std::vector<Delta>& deltas) {
    if (!root.IsObject()) return malformed("a Bedrock Converse response is not a JSON object");
    const Value* output = member(root, "output");
    const Value* message = output ? member(*output, "message") : nullptr;
    const Value* content = message ? member(*message, "content") : nullptr;
    if (!content || !content->IsArray())
        return malformed("a Bedrock Converse response without output.message.content");
    std::int64_t index = 0;
    for (const Value& block : content->GetArray()) {
        Delta d;
        if (auto text = string_member(block, "text")) {
            d.text = std::move(*text);
        } else if (const Value* use = member(block, "toolUse")) {
            ToolCallDelta t;
            t.index = index;
            t.id = string_member(*use, "toolUseId").value_or("");
            t.name = string_member(*use, "name").value_or("");
            const Value* input = member(*use, "input");
            t.arguments = input ? compact(*input) : "{}";
            d.tool_calls.push_back(std::move(t));
        } else if (const Value* reasoning = member(block, "reasoningContent")) {
            if (const Value* text = member(*reasoning, "reasoningText")) {
                d.reasoning = string_member(*text, "text").value_or("");
                d.reasoning_signature = string_member(*text, "signature").value_or("");
            }
            d.reasoning_redacted = string_member(*reasoning, "redactedContent").value_or("");
        }
        ++index;
        deltas.push_back(std::move(d));
    }
    Delta end;
    end.finish_reason = string_member(root, "stopReason");
    if (const Value* usage = member(root, "usage")) converse_usage(*usage, end);
    deltas.push_back(std::move(end));
    return std::nullopt;
}

void converse_count_body(rapidjson::Document& body) {
    // ConverseTokensRequest takes the conversation, the system prompt and the
    // tools; sampling, output and the other settings are the call's, not the count's.
    keep_members(body, {"messages", "system", "toolConfig"});
    rapidjson::Document wrapped(rapidjson::kObjectType);
    auto& a = wrapped.GetAllocator();
    rapidjson::Value converse(body, a);
    rapidjson::Value input(rapidjson::kObjectType);
    input.AddMember("converse", converse, a);
    wrapped.AddMember("input", input, a);
    body.Swap(wrapped);
}

std::string converse_error_message(const Value& root) {
    if (auto message = string_member(root, "message")) return *message;
    if (auto capital = string_member(root, "Message")) return *capital;
    return {};
}

}  // namespace nous::llm::detail
