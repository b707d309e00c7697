// Gemini generateContent: its request, its stream chunks and whole
// responses (one shape), calls numbered by the reader. The terminal signal
// is a candidate's `finishReason`.

#include <cstdint>

#include "embeddings/embedding_format.hpp"
#include "formats/conversation_checks.hpp"
#include "formats/prompt_cache.hpp"
#include "formats/request_json.hpp"
#include "formats/schema_dialects.hpp"
#include "formats/wire_format.hpp"
#include "json/ascii.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

// ---- Gemini generateContent --------------------------------------------------------
// Roles user / model; `systemInstruction`; a call is a functionCall part
// (its thoughtSignature beside it), a result a functionResponse part in a
// user turn; consecutive messages of one role are merged into one turn (all
// results of parallel calls in one).

/// The media type of an image URL by its extension (fileData wants one).
std::string media_type_of(const ContentPart& part) {
    if (!part.media_type.empty()) return part.media_type;
    std::string url = ascii_lowered(part.image_url.substr(0, part.image_url.find_first_of("?#")));
    auto ends = [&](std::string_view suffix) {
        return url.size() >= suffix.size() &&
               url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends(".png")) return "image/png";
    if (ends(".webp")) return "image/webp";
    if (ends(".gif")) return "image/gif";
    return "image/jpeg";
}

void gemini_parts(Writer& w, const ChatRequest& r, const ChatMessage& m) {
    if (m.role == "tool") {
        w.StartObject();
        w.Key("functionResponse");
        w.StartObject();
        key_string(w, "name", tool_name_for(r, m));
        w.Key("response");
        // An object result goes as it is; anything else is wrapped.
        const std::string result = text_of(m);
        auto doc = nous::http::parse_json(result);
        if (!m.is_error && doc && doc.value()->IsObject()) {
            raw_json(w, *doc.value());
        } else {
            w.StartObject();
            key_string(w, m.is_error ? "error" : "result", result);
            w.EndObject();
        }
        w.EndObject();
        w.EndObject();
        return;
    }
    // Gemini answers an empty text part with a 400 ("an empty text
    // parameter"): one is written only to carry the turn's thought signature.
    const bool signed_turn = m.role == "assistant" && !m.reasoning.signature.empty();
    if (!m.content.empty() || (signed_turn && m.tool_calls.empty() && m.parts.empty())) {
        w.StartObject();
        key_string(w, "text", m.content);
        if (signed_turn) key_string(w, "thoughtSignature", m.reasoning.signature);
        w.EndObject();
    }
    for (const ContentPart& part : m.parts) {
        if (part.kind == ContentPart::Kind::text && part.text.empty()) continue;
        w.StartObject();
        if (part.kind == ContentPart::Kind::text) {
            key_string(w, "text", part.text);
        } else if (part.image_url.empty()) {
            w.Key("inlineData");
            w.StartObject();
            key_string(w, "mimeType", part.media_type);
            key_string(w, "data", part.data);
            w.EndObject();
        } else {
            w.Key("fileData");
            w.StartObject();
            key_string(w, "mimeType", media_type_of(part));
            key_string(w, "fileUri", part.image_url);
            w.EndObject();
        }
        w.EndObject();
    }
    for (const ToolCall& call : m.tool_calls) {
        w.StartObject();
        w.Key("functionCall");
        w.StartObject();
        key_string(w, "name", call.name);
        w.Key("args");
        arguments_object(w, call.arguments);
        w.EndObject();
        if (!call.signature.empty()) key_string(w, "thoughtSignature", call.signature);
        w.EndObject();
    }
}

void gemini_contents(Writer& w, const ChatRequest& r) {
    w.Key("contents");
    w.StartArray();
    for_each_turn(r, "model",
                  [&](std::string_view role, const std::vector<const ChatMessage*>& turn) {
                      w.StartObject();
                      key_string(w, "role", role);
                      w.Key("parts");
                      w.StartArray();
                      for (const ChatMessage* m : turn) gemini_parts(w, r, *m);
                      w.EndArray();
                      w.EndObject();
                  });
    w.EndArray();
}

void gemini_body(Writer& w, const ChatRequest& r, const RequestJson& parsed) {
    w.StartObject();
    gemini_contents(w, r);
    if (const std::string system = joined_system(r); !system.empty()) {
        w.Key("systemInstruction");
        w.StartObject();
        w.Key("parts");
        w.StartArray();
        w.StartObject();
        key_string(w, "text", system);
        w.EndObject();
        w.EndArray();
        w.EndObject();
    }
    if (r.max_tokens || r.temperature || r.reasoning_effort || r.top_p || r.seed ||
        !r.stop.empty() || r.response_format) {
        w.Key("generationConfig");
        w.StartObject();
        if (r.top_p) {
            w.Key("topP");
            w.Double(*r.top_p);
        }
        if (r.seed) {
            w.Key("seed");
            w.Int64(*r.seed);
        }
        if (!r.stop.empty()) {
            w.Key("stopSequences");
            string_array(w, r.stop);
        }
        if (r.response_format) {
            key_string(w, "responseMimeType", "application/json");
            if (r.response_format->kind == ResponseFormat::Kind::json_schema) {
                w.Key("responseJsonSchema");
                raw_json(w, *parsed.response_schema);
            }
        }
        if (r.max_tokens) {
            w.Key("maxOutputTokens");
            w.Int(*r.max_tokens);
        }
        if (r.temperature) {
            w.Key("temperature");
            w.Double(*r.temperature);
        }
        if (r.reasoning_effort) {
            w.Key("thinkingConfig");
            w.StartObject();
            w.Key("thinkingBudget");
            w.Int(thinking_budget(*r.reasoning_effort));
            w.Key("includeThoughts");
            w.Bool(true);
            w.EndObject();
        }
        w.EndObject();
    }
    if (r.tool_choice) {
        w.Key("toolConfig");
        w.StartObject();
        w.Key("functionCallingConfig");
        w.StartObject();
        const ToolChoice::Mode mode = r.tool_choice->mode;
        key_string(w, "mode",
                   mode == ToolChoice::Mode::none        ? "NONE"
                   : mode == ToolChoice::Mode::automatic ? "AUTO"
                                                         : "ANY");
        if (mode == ToolChoice::Mode::named) {
            w.Key("allowedFunctionNames");
            string_array(w, {r.tool_choice->name});
        }
        w.EndObject();
        w.EndObject();
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        w.StartObject();
        w.Key("functionDeclarations");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i)
            // JSON Schema as it is: `parameters` takes only Gemini's OpenAPI
            // subset (no additionalProperties, which every schema generator writes).
            tool_object(w, r.tools[i], *parsed.tools[i], "parametersJsonSchema");
        w.EndArray();
        w.EndObject();
        w.EndArray();
    }
    w.EndObject();
}

/// Gemini's output count leaves the thoughts out: every output token is
/// candidates + thoughts (Usage::output_tokens). The prompt count already
/// includes the cached content.
std::optional<std::int64_t> gemini_output(std::optional<std::int64_t> candidates,
                                          std::optional<std::int64_t> thoughts) {
    if (!candidates && !thoughts) return std::nullopt;
    return candidates.value_or(0) + thoughts.value_or(0);
}

/// Gemini usageMetadata: prompt and candidates tokens, cached content, thoughts.
void gemini_usage(const Value& usage, Delta& d) {
    d.input_tokens = int_member(usage, "promptTokenCount");
    d.reasoning_tokens = int_member(usage, "thoughtsTokenCount");
    d.output_tokens = gemini_output(int_member(usage, "candidatesTokenCount"), d.reasoning_tokens);
    d.cached_input_tokens = int_member(usage, "cachedContentTokenCount");
}

void gemini(const Value& doc, int& calls, std::vector<Delta>& out) {
    // Gemini sometimes wraps a chunk, or an error, in an array.
    if (doc.IsArray()) {
        for (const Value& item : doc.GetArray()) gemini(item, calls, out);
        return;
    }
    Delta d;
    if (const Value* error = member(doc, "error")) {
        d.error = error_text(*error);
        out.push_back(std::move(d));
        return;
    }
    if (const Value* candidates = member(doc, "candidates"); candidates && candidates->IsArray()) {
        for (const Value& candidate : candidates->GetArray()) {
            // Only the first candidate (index 0, or none) is the message: a
            // server asked for more (candidateCount) sends each its index.
            if (const Value* index = member(candidate, "index");
                index && index->IsInt64() && index->GetInt64() != 0)
                continue;
            if (const Value* content = member(candidate, "content"))
                if (const Value* parts = member(*content, "parts"); parts && parts->IsArray())
                    for (const Value& part : parts->GetArray()) {
                        const Value* thought = member(part, "thought");
                        const bool is_thought = thought && thought->IsBool() && thought->GetBool();
                        auto signature = string_member(part, "thoughtSignature");
                        if (auto text = string_member(part, "text"))
                            (is_thought ? d.reasoning : d.text) += *text;
                        if (const Value* fn = member(part, "functionCall")) {
                            ToolCallDelta t;
                            t.index = calls++;
                            t.id = string_member(*fn, "id").value_or("");
                            t.name = string_member(*fn, "name").value_or("");
                            // Gemini often sends no id: one of ours, so that a tool
                            // result can name the call it answers (it is never sent).
                            if (t.id.empty())
                                t.id = "call_" + std::to_string(t.index) + "_" + t.name;
                            const Value* args = member(*fn, "args");
                            t.arguments = args ? compact(*args) : "{}";
                            // The signature of a call's part goes back with that call.
                            if (signature) t.signature = std::move(*signature);
                            d.tool_calls.push_back(std::move(t));
                        } else if (signature) {
                            d.reasoning_signature = std::move(*signature);
                        }
                    }
            if (auto reason = string_member(candidate, "finishReason")) {
                d.finish_reason = *reason;
                d.end_of_message = true;
            }
        }
    }
    // A prompt Gemini blocked has no candidate: its block reason (SAFETY,
    // BLOCKLIST, PROHIBITED_CONTENT, ...) is the message's end, not a stream
    // cut short.
    if (const Value* feedback = member(doc, "promptFeedback"))
        if (auto reason = string_member(*feedback, "blockReason"); reason && !d.finish_reason) {
            d.finish_reason = *reason;
            d.end_of_message = true;
        }
    if (const Value* usage = member(doc, "usageMetadata")) gemini_usage(*usage, d);
    if (adds_something(d)) out.push_back(std::move(d));
}

/// The same delta gemini() makes, from the Gemini reader's fields.
void append_fast(const detail::EventJson::GeminiChunk& chunk, std::vector<Delta>& out) {
    Delta& d = out.emplace_back();  // in place, as for an OpenAI chunk
    if (chunk.has_text) (chunk.thought ? d.reasoning : d.text).assign(chunk.text);
    if (chunk.has_finish_reason) {
        d.finish_reason = std::string(chunk.finish_reason);
        d.end_of_message = true;
    }
    d.input_tokens = chunk.input_tokens;
    d.output_tokens = gemini_output(chunk.output_tokens, chunk.reasoning_tokens);
    d.cached_input_tokens = chunk.cached_input_tokens;
    d.reasoning_tokens = chunk.reasoning_tokens;
    if (!adds_something(d)) out.pop_back();
}

/// The same for a Gemini chunk: a non-empty text and nothing else (an
/// empty one adds nothing, as gemini() finds).
bool is_text_only(const detail::EventJson::GeminiChunk& chunk) {
    return chunk.has_text && !chunk.thought && !chunk.text.empty() && !chunk.has_finish_reason &&
           !chunk.input_tokens && !chunk.output_tokens && !chunk.cached_input_tokens &&
           !chunk.reasoning_tokens;
}

class GeminiEvents final : public EventReader {
  public:
    bool read_fast(const nous::http::EventView&, std::string_view data, EventJson& json,
                   std::vector<Delta>& out, std::optional<std::string_view>* text_only) override {
        EventJson::GeminiChunk chunk;
        if (!json.gemini_chunk(data, chunk)) return false;
        if (text_only && is_text_only(chunk))
            *text_only = chunk.text;
        else
            append_fast(chunk, out);
        return true;
    }

    std::optional<Error> read_document(const nous::http::EventView&, const Value& root,
                                       std::vector<Delta>& out) override {
        if (!root.IsObject() && !root.IsArray())
            return malformed("a Gemini chunk is not a JSON object");
        gemini(root, calls_, out);
        return std::nullopt;
    }

  private:
    int calls_ = 0;  ///< calls numbered so far (Gemini sends no index)
};

class Gemini final : public WireFormat {
  public:
    const EmbeddingFormat* embeddings() const noexcept override {
        return &gemini_embedding_format();
    }
    Provider provider() const noexcept override { return Provider::gemini; }
    std::string_view name() const noexcept override { return "gemini"; }
    /// generationConfig.temperature: 0.0 to 2.0.
    std::optional<double> max_temperature() const noexcept override { return 2.0; }
    std::string_view default_base_url() const noexcept override {
        return "https://generativelanguage.googleapis.com/v1beta";
    }
    std::string_view default_api_key_env() const noexcept override { return "GEMINI_API_KEY"; }

    std::string url(const ChatRequest& request, const std::string& base) const override {
        return base + "/models/" + request.model +
               (request.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_api_key(headers, "x-goog-api-key", request.api_key);
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        if (auto bad = model_in_path_check(request.model, name())) return bad;
        // Gemini has no switch for one call a turn.
        if (request.parallel_tool_calls) return unsupported("parallel_tool_calls", *this);
        if (auto bad = tools_check(request, parsed, *this, ToolNameRule::gemini, nullptr))
            return bad;
        if (auto bad = tool_arguments_check(request, *this)) return bad;
        if (auto bad = image_detail_check(request, *this, false)) return bad;
        if (auto bad = image_place_check(request, *this, ImagePlaces{false, true})) return bad;
        if (auto bad =
                empty_turn_check(request, *this, "model", false, RedactedReasoning::not_sent))
            return bad;
        if (auto bad = tool_pairing_check(request, false, false)) return bad;
        if (parsed.response_schema)
            if (auto bad = gemini_break(*parsed.response_schema))
                return schema_refused(bad->message(), *this);
        return std::nullopt;
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        gemini_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        if (auto bad = refuse_cache_settings(request, *this, cache_cached_content)) return bad;
        if (!request.cached_content.empty())  // a cache made beforehand, by its name
            body.AddMember("cachedContent",
                           rapidjson::Value(request.cached_content.c_str(), body.GetAllocator()),
                           body.GetAllocator());
        return std::nullopt;
    }
    std::optional<Error> count_request(const ChatRequest& request, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        url = base + "/models/" + request.model + ":countTokens";
        // The request it counts, whole, under generateContentRequest with its model.
        auto& a = body.GetAllocator();
        rapidjson::Value counted(rapidjson::kObjectType);
        counted.AddMember("model", rapidjson::Value(("models/" + request.model).c_str(), a), a);
        for (auto& m : body.GetObject()) counted.AddMember(m.name, m.value, a);
        body.SetObject();
        body.AddMember("generateContentRequest", counted, a);
        return std::nullopt;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return count_member(root, "totalTokens");
    }

    std::unique_ptr<EventReader> event_reader() const override {
        return std::make_unique<GeminiEvents>();
    }
    std::string_view terminal_signal() const noexcept override { return "finishReason"; }

    std::optional<Error> read_whole(const Value& root, std::vector<Delta>& deltas) const override {
        if (!root.IsObject() && !root.IsArray())
            return malformed("a Gemini response is not a JSON object");
        int calls = 0;
        gemini(root, calls, deltas);
        return std::nullopt;
    }
};

}  // namespace

const WireFormat& gemini_format() noexcept {
    static const Gemini format;
    return format;
}

}  // namespace nous::llm::detail
