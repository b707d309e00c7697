// Anthropic Messages: its request, its stream events (content blocks,
// thinking with its signature, tool_use), its whole response. The terminal
// signal is `message_stop`; `ping` events are not content. What the API
// refuses beyond the shared checks: formats/anthropic/request_checks.hpp.

#include <cstdint>
#include <string_view>

#include "formats/anthropic/prompt_cache.hpp"
#include "formats/anthropic/request_checks.hpp"
#include "formats/conversation_checks.hpp"
#include "formats/request_json.hpp"
#include "formats/schema_dialects.hpp"
#include "formats/text_delta.hpp"
#include "formats/wire_format.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

// ---- Anthropic Messages ------------------------------------------------------------
// One `system`; turns alternate user / assistant, so consecutive messages of
// one role (tool results count as user) are merged into one turn, in order:
// results, then the user's text that follows them. An assistant turn: its
// thinking block (with the signature; required before tool_use when
// thinking is on), text, tool_use blocks.

/// The blocks one message adds to its turn.
void anthropic_blocks(Writer& w, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        key_string(w, "type", "tool_result");
        key_string(w, "tool_use_id", wire_tool_id(m.tool_call_id, kAnthropicIds));
        key_string(w, "content", text_of(m));
        if (m.is_error) {
            w.Key("is_error");
            w.Bool(true);
        }
        w.EndObject();
        return;
    }
    if (m.role == "assistant" && !m.reasoning.signature.empty()) {
        w.StartObject();
        key_string(w, "type", "thinking");
        key_string(w, "thinking", m.reasoning.text);
        key_string(w, "signature", m.reasoning.signature);
        w.EndObject();
    }
    if (m.role == "assistant")
        for (const std::string& data : m.reasoning.redacted) {
            w.StartObject();
            key_string(w, "type", "redacted_thinking");
            key_string(w, "data", data);
            w.EndObject();
        }
    if (!m.content.empty()) {
        w.StartObject();
        key_string(w, "type", "text");
        key_string(w, "text", m.content);
        w.EndObject();
    }
    for (const ContentPart& part : m.parts) {
        // An empty text block is a 400 ("text content blocks must be non-empty").
        if (part.kind == ContentPart::Kind::text && part.text.empty()) continue;
        w.StartObject();
        if (part.kind == ContentPart::Kind::text) {
            key_string(w, "type", "text");
            key_string(w, "text", part.text);
        } else {
            key_string(w, "type", "image");
            w.Key("source");
            w.StartObject();
            if (part.image_url.empty()) {
                key_string(w, "type", "base64");
                key_string(w, "media_type", part.media_type);
                key_string(w, "data", part.data);
            } else {
                key_string(w, "type", "url");
                key_string(w, "url", part.image_url);
            }
            w.EndObject();
        }
        w.EndObject();
    }
    for (const ToolCall& call : m.tool_calls) {
        w.StartObject();
        key_string(w, "type", "tool_use");
        key_string(w, "id", wire_tool_id(call.id, kAnthropicIds));
        key_string(w, "name", call.name);
        w.Key("input");
        arguments_object(w, call.arguments);
        w.EndObject();
    }
}

/// A message that is plain text alone is sent as a string, as the documented examples do.
bool plain_text(const ChatMessage& m) {
    return m.role != "tool" && m.parts.empty() && m.tool_calls.empty() &&
           (m.role != "assistant" || m.reasoning.signature.empty());
}

void anthropic_messages(Writer& w, const ChatRequest& r) {
    w.Key("messages");
    w.StartArray();
    for_each_turn(r, "assistant",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      w.StartObject();
                      key_string(w, "role", role);
                      w.Key("content");
                      if (turn.size() == 1 && plain_text(*turn[0])) {
                          string(w, turn[0]->content);
                      } else {
                          w.StartArray();
                          for (const ChatMessage* m : turn) anthropic_blocks(w, *m);
                          w.EndArray();
                      }
                      w.EndObject();
                  });
    w.EndArray();
}

void anthropic_body(Writer& w, const ChatRequest& r, const RequestJson& parsed) {
    w.StartObject();
    key_string(w, "model", r.model);
    int max_tokens = r.max_tokens.value_or(1024);  // required by the Messages API
    if (r.reasoning_effort && max_tokens <= thinking_budget(*r.reasoning_effort))
        max_tokens = thinking_budget(*r.reasoning_effort) + r.max_tokens.value_or(1024);
    w.Key("max_tokens");
    w.Int(max_tokens);
    if (const std::string system = joined_system(r); !system.empty())
        key_string(w, "system", system);
    anthropic_messages(w, r);
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) {
        w.Key("thinking");
        w.StartObject();
        key_string(w, "type", "enabled");
        w.Key("budget_tokens");
        w.Int(thinking_budget(*r.reasoning_effort));
        w.EndObject();
    }
    if (r.top_p) {
        w.Key("top_p");
        w.Double(*r.top_p);
    }
    if (!r.stop.empty()) {
        w.Key("stop_sequences");
        string_array(w, r.stop);
    }
    // tool_choice: auto / any / none / tool (with its name); one call a turn
    // is its disable_parallel_tool_use (on "auto" when no choice was given).
    if (r.tool_choice || r.parallel_tool_calls == std::optional<bool>(false)) {
        const ToolChoice choice = r.tool_choice.value_or(ToolChoice{});
        w.Key("tool_choice");
        w.StartObject();
        key_string(w, "type",
                   choice.mode == ToolChoice::Mode::required ? "any"
                   : choice.mode == ToolChoice::Mode::named  ? "tool"
                   : choice.mode == ToolChoice::Mode::none   ? "none"
                                                             : "auto");
        if (choice.mode == ToolChoice::Mode::named) key_string(w, "name", choice.name);
        if (r.parallel_tool_calls && choice.mode != ToolChoice::Mode::none) {
            w.Key("disable_parallel_tool_use");
            w.Bool(!*r.parallel_tool_calls);
        }
        w.EndObject();
    }
    if (r.response_format) {
        w.Key("output_config");
        w.StartObject();
        w.Key("format");
        w.StartObject();
        key_string(w, "type", "json_schema");
        w.Key("schema");
        raw_json(w, *parsed.response_schema);
        w.EndObject();
        w.EndObject();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            tool_object(w, r.tools[i], *parsed.tools[i], "input_schema", nullptr, true, true);
        w.EndArray();
    }
    w.EndObject();
}

/// Claude declines by its stop_reason "refusal": reported as a refusal, not text.
void note_refusal(Delta& d) {
    if (d.finish_reason == std::optional<std::string>("refusal"))
        d.refusal = "the model declined to answer (stop_reason refusal)";
}

/// The cache counts of one message, kept between its events: message_start
/// reports them, a message_delta may repeat them or not.
struct CacheCounts {
    std::int64_t read = 0, written = 0, written_1h = 0;
};

/// Anthropic usage in the shared meaning (Usage): its input_tokens leaves
/// the cache reads and writes out, so every input token is the three summed
/// (the cache counts last reported when this event has none); thinking
/// tokens where output_tokens_details sends them.
void anthropic_usage(const Value& usage, Delta& d, CacheCounts& cache) {
    if (auto read = int_member(usage, "cache_read_input_tokens")) cache.read = *read;
    if (auto written = int_member(usage, "cache_creation_input_tokens")) cache.written = *written;
    if (const Value* creation = member(usage, "cache_creation"))
        if (auto hour = int_member(*creation, "ephemeral_1h_input_tokens"))
            cache.written_1h = *hour;
    if (auto input = int_member(usage, "input_tokens")) {
        d.input_tokens = *input + cache.read + cache.written;
        d.cached_input_tokens = cache.read;
        d.cache_write_input_tokens = cache.written;
        d.cache_write_1h_input_tokens = cache.written_1h;
    }
    d.output_tokens = int_member(usage, "output_tokens");
    if (const Value* details = member(usage, "output_tokens_details"))
        d.reasoning_tokens = int_member(*details, "thinking_tokens");
}

void anthropic(std::string_view type, const Value& doc, CacheCounts& cache,
               std::vector<Delta>& out) {
    Delta d;
    if (type == "message_start") {
        if (const Value* message = member(doc, "message"))
            if (const Value* usage = member(*message, "usage")) anthropic_usage(*usage, d, cache);
    } else if (type == "content_block_start") {
        const Value* block = member(doc, "content_block");
        if (block && string_member(*block, "type") == std::optional<std::string>("tool_use")) {
            ToolCallDelta t;
            t.index = int_member(doc, "index").value_or(0);
            t.id = string_member(*block, "id").value_or("");
            t.name = string_member(*block, "name").value_or("");
            // A non-empty initial input is the whole argument object.
            if (const Value* input = member(*block, "input");
                input && input->IsObject() && input->MemberCount() > 0)
                t.arguments = compact(*input);
            d.tool_calls.push_back(std::move(t));
        } else if (block &&
                   string_member(*block, "type") == std::optional<std::string>("thinking")) {
            d.reasoning = string_member(*block, "thinking").value_or("");
            d.reasoning_signature = string_member(*block, "signature").value_or("");
        } else if (block && string_member(*block, "type") ==
                                std::optional<std::string>("redacted_thinking")) {
            d.reasoning_redacted = string_member(*block, "data").value_or("");
        } else if (block) {
            d.text = string_member(*block, "text").value_or("");
        }
    } else if (type == "content_block_delta") {
        const Value* delta = member(doc, "delta");
        if (!delta) return;
        const std::string_view kind = view_member(*delta, "type");
        if (kind == "text_delta") {
            d.text = string_member(*delta, "text").value_or("");
        } else if (kind == "thinking_delta") {
            d.reasoning = string_member(*delta, "thinking").value_or("");
        } else if (kind == "signature_delta") {
            d.reasoning_signature = string_member(*delta, "signature").value_or("");
        } else if (kind == "input_json_delta") {
            ToolCallDelta t;
            t.index = int_member(doc, "index").value_or(0);
            t.arguments = string_member(*delta, "partial_json").value_or("");
            d.tool_calls.push_back(std::move(t));
        }
    } else if (type == "message_delta") {
        if (const Value* delta = member(doc, "delta"))
            d.finish_reason = string_member(*delta, "stop_reason");
        note_refusal(d);
        if (const Value* usage = member(doc, "usage")) anthropic_usage(*usage, d, cache);
    } else if (type == "error") {
        const Value* error = member(doc, "error");
        d.error = error ? error_text(*error) : std::string("error");
    } else if (type == "message_stop") {
        d.end_of_message = true;
    } else {
        return;  // content_block_stop, ping, unknown: nothing to add
    }
    if (adds_something(d)) out.push_back(std::move(d));
}

class AnthropicEvents final : public EventReader {
  public:
    bool read_fast(const nous::http::EventView& event, std::string_view data, EventJson& json,
                   std::vector<Delta>& out, std::optional<std::string_view>* text_only) override {
        EventJson::TextDelta delta;
        if (!json.anthropic_delta(data, event.type, delta)) return false;
        hand_out_text_delta(delta, out, text_only);
        return true;
    }

    std::optional<Error> read_document(const nous::http::EventView& event, const Value& root,
                                       std::vector<Delta>& out) override {
        if (!root.IsObject()) return malformed("an Anthropic event is not a JSON object");
        // The data's own "type" names the event (the SSE event name says the same).
        const Value* named = member(root, "type");
        const std::string_view type =
            named && named->IsString()
                ? std::string_view(named->GetString(), named->GetStringLength())
                : event.type;
        anthropic(type, root, cache_, out);
        return std::nullopt;
    }

  private:
    CacheCounts cache_;  ///< this message's, from its message_start
};

class Anthropic final : public WireFormat {
  public:
    Provider provider() const noexcept override { return Provider::anthropic; }
    std::string_view name() const noexcept override { return "anthropic"; }
    /// "Ranges from 0.0 to 1.0" (the Messages API).
    std::optional<double> max_temperature() const noexcept override { return 1.0; }
    std::string_view default_base_url() const noexcept override {
        return "https://api.anthropic.com/v1";
    }
    std::string_view default_api_key_env() const noexcept override { return "ANTHROPIC_API_KEY"; }

    std::string url(const ChatRequest&, const std::string& base) const override {
        return base + "/messages";
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        if (request.seed) return unsupported("seed", *this);
        if (auto bad = version_check(request, *this)) return bad;
        if (auto bad = thinking_check(request, *this)) return bad;
        if (auto bad =
                tools_check(request, parsed, *this, ToolNameRule::anthropic, anthropic_break))
            return bad;
        if (auto bad = tool_arguments_check(request, *this)) return bad;
        if (auto bad = image_detail_check(request, *this, false)) return bad;
        if (auto bad = image_place_check(request, *this, ImagePlaces{false, true})) return bad;
        if (auto bad = empty_turn_check(request, *this, "assistant", true, RedactedReasoning::sent))
            return bad;
        if (auto bad = whitespace_check(request, *this)) return bad;
        if (auto bad = tool_pairing_check(request, false, true)) return bad;
        if (auto bad = image_type_check(request, *this)) return bad;
        if (!request.response_format) return std::nullopt;
        // Anthropic's structured outputs take a schema; plain JSON mode has no field.
        if (request.response_format->kind == ResponseFormat::Kind::json_object)
            return unsupported("a JSON response without a schema (json_object)", *this);
        if (auto bad = anthropic_break(*parsed.response_schema))
            return schema_refused(bad->message(), *this);
        return std::nullopt;
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_api_key(headers, "x-api-key", request.api_key);
        headers.emplace_back("anthropic-version", anthropic_version_of(request));
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        anthropic_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return write_anthropic_cache(body, request, *this);
    }
    std::optional<Error> count_request(const ChatRequest&, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        url = base + "/messages/count_tokens";
        // MessageCountTokensParams: no max_tokens, sampling, stop or stream.
        keep_members(body, {"model", "messages", "system", "tools", "tool_choice", "thinking",
                            "output_config", "cache_control"});
        return std::nullopt;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return count_member(root, "input_tokens");
    }

    std::unique_ptr<EventReader> event_reader() const override {
        return std::make_unique<AnthropicEvents>();
    }
    std::string_view terminal_signal() const noexcept override { return "message_stop"; }
    bool has_keepalive_events() const noexcept override { return true; }

    std::optional<Error> read_whole(const Value& root, std::vector<Delta>& deltas) const override {
        if (!root.IsObject()) return malformed("an Anthropic response is not a JSON object");
        if (string_member(root, "type") == std::optional<std::string>("error")) {
            CacheCounts cache;
            anthropic("error", root, cache, deltas);
            return std::nullopt;
        }
        const Value* content = member(root, "content");
        if (!content || !content->IsArray())
            return malformed("an Anthropic response without content");
        std::int64_t index = 0;
        for (const Value& block : content->GetArray()) {
            Delta d;
            const auto type = string_member(block, "type").value_or("");
            if (type == "text") {
                d.text = string_member(block, "text").value_or("");
            } else if (type == "thinking") {
                d.reasoning = string_member(block, "thinking").value_or("");
                d.reasoning_signature = string_member(block, "signature").value_or("");
            } else if (type == "redacted_thinking") {
                d.reasoning_redacted = string_member(block, "data").value_or("");
            } else if (type == "tool_use") {
                ToolCallDelta t;
                t.index = index;
                t.id = string_member(block, "id").value_or("");
                t.name = string_member(block, "name").value_or("");
                const Value* input = member(block, "input");
                t.arguments = input ? compact(*input) : "{}";
                d.tool_calls.push_back(std::move(t));
            }
            ++index;
            deltas.push_back(std::move(d));
        }
        Delta end;
        end.finish_reason = string_member(root, "stop_reason");
        note_refusal(end);
        CacheCounts cache;
        if (const Value* usage = member(root, "usage")) anthropic_usage(*usage, end, cache);
        deltas.push_back(std::move(end));
        return std::nullopt;
    }
};

}  // namespace

const WireFormat& anthropic_format() noexcept {
    static const Anthropic format;
    return format;
}

}  // namespace nous::llm::detail
