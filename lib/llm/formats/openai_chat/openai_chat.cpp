// OpenAI chat completions, and the many servers that speak it (vLLM,
// DeepSeek, OpenRouter, Ollama's /v1): its request, its stream chunks, its
// whole response. The terminal signal is a `finish_reason`.

#include <cstdint>

#include "embeddings/embedding_format.hpp"
#include "formats/openai_chat/openai_message.hpp"
#include "formats/prompt_cache.hpp"
#include "formats/request_json.hpp"
#include "formats/wire_format.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

// ---- OpenAI chat completions ---------------------------------------------------
// system/user/assistant/tool roles as they are; an assistant's calls in
// `tool_calls`, a result as role "tool" with `tool_call_id`; parts as
// text / image_url. Reasoning is not sent back (the API takes none).

void openai_body(Writer& w, const ChatRequest& r, const RequestJson& parsed) {
    w.StartObject();
    key_string(w, "model", r.model);
    w.Key("messages");
    w.StartArray();
    // As the API takes them: none of message_to_json's additions.
    if (!r.system.empty()) write_openai_message(w, ChatMessage::system(r.system), false);
    for (const auto& m : r.messages) write_openai_message(w, m, false);
    w.EndArray();
    if (r.stream) {
        w.Key("stream");
        w.Bool(true);
        w.Key("stream_options");
        w.StartObject();
        w.Key("include_usage");
        w.Bool(true);
        w.EndObject();
    }
    if (r.max_tokens) {
        w.Key("max_tokens");
        w.Int(*r.max_tokens);
    }
    if (r.temperature) {
        w.Key("temperature");
        w.Double(*r.temperature);
    }
    if (r.reasoning_effort) key_string(w, "reasoning_effort", effort_name(*r.reasoning_effort));
    if (r.top_p) {
        w.Key("top_p");
        w.Double(*r.top_p);
    }
    if (r.seed) {
        w.Key("seed");
        w.Int64(*r.seed);
    }
    if (!r.stop.empty()) {
        w.Key("stop");
        string_array(w, r.stop);
    }
    // The two OpenAI formats spell these alike but for where a name goes.
    write_openai_tool_choice(w, r, OpenAIShape::chat);
    if (r.response_format) {
        w.Key("response_format");
        write_openai_format(w, *r.response_format, parsed, OpenAIShape::chat);
    }
    if (!r.tools.empty()) {
        w.Key("tools");
        w.StartArray();
        for (std::size_t i = 0; i < r.tools.size(); ++i) {
            w.StartObject();
            key_string(w, "type", "function");
            w.Key("function");
            tool_object(w, r.tools[i], *parsed.tools[i], "parameters", nullptr, true);
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
}

/// The index of an OpenAI-compatible tool-call piece. Sent: as is (64-bit).
/// Missing (some compatible servers): a new id starts a new call, a piece
/// without one continues the last call, as the official SDKs assemble them.
template <typename Calls>
std::int64_t tool_call_index(const Value& call, const std::string& id, Calls& calls) {
    std::int64_t index;
    if (auto sent = int_member(call, "index")) {
        index = *sent;
    } else if (!calls.any || (!id.empty() && id != calls.last_id)) {
        index = calls.next_index;
    } else {
        index = calls.last_index;
    }
    calls.any = true;
    calls.last_index = index;
    if (index >= calls.next_index) calls.next_index = index == INT64_MAX ? index : index + 1;
    if (!id.empty()) calls.last_id = id;
    return index;
}

/// Reasoning in an OpenAI-compatible delta or message, in every spelling
/// servers use: `reasoning_content` (DeepSeek, older vLLM), `reasoning`
/// (vLLM >= 0.9, OpenRouter), `reasoning_details[]` (OpenRouter: text or
/// summary pieces, signatures, encrypted data). OpenRouter sends `reasoning`
/// and `reasoning_details` together with the same text: the text is taken
/// from one spelling only, the signature from the details.
void openai_reasoning(const Value& delta, Delta& d) {
    std::optional<std::string> text = string_member(delta, "reasoning_content");
    if (!text) text = string_member(delta, "reasoning");
    const Value* details = member(delta, "reasoning_details");
    if (details && details->IsArray()) {
        for (const Value& detail : details->GetArray()) {
            if (!text) {
                if (auto piece = string_member(detail, "text")) d.reasoning += *piece;
                if (auto piece = string_member(detail, "summary")) d.reasoning += *piece;
            }
            if (auto signature = string_member(detail, "signature"))
                d.reasoning_signature = *signature;
            if (string_member(detail, "type") == std::optional<std::string>("reasoning.encrypted"))
                if (auto data = string_member(detail, "data")) d.reasoning_signature = *data;
        }
    }
    if (text) d.reasoning += *text;
}

/// Only the first choice (index 0) is the message: with `n` > 1 a server
/// interleaves choices, and mixing them would merge different answers.
bool is_first_choice(const Value& choice) {
    const Value* index = member(choice, "index");
    return index == nullptr || !index->IsInt64() || index->GetInt64() == 0;
}

template <typename Calls>
void openai(const Value& doc, Calls& unindexed, std::vector<Delta>& out) {
    Delta d;
    bool any = false;
    // A chunk holding "error" (OpenAI; OpenRouter beside finish_reason
    // "error", its code a number), or vLLM's {"object":"error","message"}.
    if (const Value* error = member(doc, "error"); error && !error->IsNull()) {
        d.error = error_text(*error);
        out.push_back(std::move(d));
        return;
    }
    if (string_member(doc, "object") == std::optional<std::string>("error")) {
        d.error = error_text(doc);
        out.push_back(std::move(d));
        return;
    }
    if (const Value* choices = member(doc, "choices"); choices && choices->IsArray()) {
        for (const Value& choice : choices->GetArray()) {
            if (!is_first_choice(choice)) continue;
            if (const Value* delta = member(choice, "delta")) {
                if (auto text = string_member(*delta, "content")) {
                    d.text += *text;
                    any = true;
                }
                openai_reasoning(*delta, d);
                if (auto refusal = string_member(*delta, "refusal")) {
                    d.refusal += *refusal;
                    any = true;
                }
                if (const Value* calls = member(*delta, "tool_calls"); calls && calls->IsArray()) {
                    for (const Value& call : calls->GetArray()) {
                        ToolCallDelta t;
                        t.id = string_member(call, "id").value_or("");
                        t.index = tool_call_index(call, t.id, unindexed);
                        if (const Value* fn = member(call, "function")) {
                            t.name = string_member(*fn, "name").value_or("");
                            t.arguments = string_member(*fn, "arguments").value_or("");
                        }
                        d.tool_calls.push_back(std::move(t));
                        any = true;
                    }
                }
            }
            if (auto reason = string_member(choice, "finish_reason")) {
                d.finish_reason = *reason;
                d.end_of_message = true;
                any = true;
            }
        }
    }
    if (const Value* usage = member(doc, "usage"); usage && usage->IsObject()) {
        openai_style_usage(*usage, kChatUsage, d);
        any = any || has_usage(d);
    }
    if (any || adds_something(d)) out.push_back(std::move(d));
}

/// The same delta openai() makes, from the SAX reader's fields.
void append_fast(const detail::EventJson::OpenAIChunk& chunk, std::vector<Delta>& out) {
    // Built in place, not in a local moved in: a token's wake-up finds this
    // memory cold, and the local was one more Delta's worth of lines per token.
    Delta& d = out.emplace_back();
    bool any = false;
    if (chunk.has_content) {
        d.text.assign(chunk.content);
        any = true;
    }
    if (chunk.has_reasoning_content)
        d.reasoning.assign(chunk.reasoning_content);
    else if (chunk.has_reasoning)
        d.reasoning.assign(chunk.reasoning);
    if (chunk.has_finish_reason) {
        d.finish_reason = std::string(chunk.finish_reason);
        d.end_of_message = true;
        any = true;
    }
    if (chunk.has_usage) {
        d.input_tokens = chunk.input_tokens;
        d.output_tokens = chunk.output_tokens;
        d.cached_input_tokens = chunk.cached_input_tokens;
        d.reasoning_tokens = chunk.reasoning_tokens;
    }
    if (!any && !adds_something(d)) out.pop_back();
}

/// Whether the chunk's whole delta is its text: a Delta with nothing but
/// `text` set (what append_fast() would append).
bool is_text_only(const detail::EventJson::OpenAIChunk& chunk) {
    return chunk.has_content && !chunk.has_reasoning_content && !chunk.has_reasoning &&
           !chunk.has_finish_reason && !chunk.has_usage;
}

class OpenAIChatEvents final : public EventReader {
  public:
    bool read_fast(const nous::http::EventView&, std::string_view data, EventJson& json,
                   std::vector<Delta>& out, std::optional<std::string_view>* text_only) override {
        EventJson::OpenAIChunk chunk;
        if (!json.openai_chunk(data, chunk)) return false;
        if (text_only && is_text_only(chunk))
            *text_only = chunk.content;
        else
            append_fast(chunk, out);
        return true;
    }

    std::optional<Error> read_document(const nous::http::EventView&, const Value& root,
                                       std::vector<Delta>& out) override {
        if (!root.IsObject()) return malformed("an OpenAI chunk is not a JSON object");
        openai(root, calls_, out);
        return std::nullopt;
    }

  private:
    /// OpenAI-compatible servers that omit a tool call's "index": the call
    /// the last piece went to, and the next free index for a new id.
    struct UnindexedCalls {
        bool any = false;
        std::int64_t last_index = 0;
        std::int64_t next_index = 0;
        std::string last_id;
    } calls_;
};

class OpenAIChat final : public WireFormat {
  public:
    const EmbeddingFormat* embeddings() const noexcept override {
        return &openai_embedding_format();
    }
    Provider provider() const noexcept override { return Provider::openai; }
    std::string_view name() const noexcept override { return "openai"; }
    std::string_view default_base_url() const noexcept override {
        return "https://api.openai.com/v1";
    }
    std::string_view default_api_key_env() const noexcept override { return "OPENAI_API_KEY"; }

    std::string url(const ChatRequest&, const std::string& base) const override {
        return base + "/chat/completions";
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        return openai_request_check(request, parsed, *this);
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_bearer_auth(headers, request.api_key);
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        openai_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return write_openai_cache(body, request, *this);
    }

    std::unique_ptr<EventReader> event_reader() const override {
        return std::make_unique<OpenAIChatEvents>();
    }
    std::string_view terminal_signal() const noexcept override { return "finish_reason"; }

    std::optional<Error> read_whole(const Value& root, std::vector<Delta>& deltas) const override {
        if (!root.IsObject()) return malformed("an OpenAI response is not a JSON object");
        if (const Value* error = member(root, "error"); error && !error->IsNull()) {
            Delta d;
            d.error = error_text(*error);
            deltas.push_back(std::move(d));
            return std::nullopt;
        }
        const Value* choices = member(root, "choices");
        if (!choices || !choices->IsArray()) return malformed("an OpenAI response without choices");
        for (const Value& choice : choices->GetArray()) {
            if (!is_first_choice(choice)) continue;
            Delta d;
            if (const Value* message = member(choice, "message")) {
                d.text = string_member(*message, "content").value_or("");
                openai_reasoning(*message, d);
                d.refusal = string_member(*message, "refusal").value_or("");
                if (const Value* calls = member(*message, "tool_calls");
                    calls && calls->IsArray()) {
                    std::int64_t index = 0;
                    for (const Value& call : calls->GetArray()) {
                        ToolCallDelta t;
                        t.index = index++;
                        t.id = string_member(call, "id").value_or("");
                        if (const Value* fn = member(call, "function")) {
                            t.name = string_member(*fn, "name").value_or("");
                            t.arguments = string_member(*fn, "arguments").value_or("");
                        }
                        d.tool_calls.push_back(std::move(t));
                    }
                }
            }
            d.finish_reason = string_member(choice, "finish_reason");
            deltas.push_back(std::move(d));
            break;  // the first choice is the message
        }
        if (const Value* usage = member(root, "usage"); usage && usage->IsObject()) {
            Delta d;
            openai_style_usage(*usage, kChatUsage, d);
            deltas.push_back(std::move(d));
        }
        return std::nullopt;
    }
};

}  // namespace

const WireFormat& openai_chat_format() noexcept {
    static const OpenAIChat format;
    return format;
}

}  // namespace nous::llm::detail
