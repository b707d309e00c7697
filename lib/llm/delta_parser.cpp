// Stream items of OpenAI chat completions, Anthropic and Gemini into one
// Delta type (the Responses API: responses_format.cpp), whole responses too.

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>

#include "event_json.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "provider_json.hpp"

namespace nous::llm {

namespace {

using namespace detail;

/// Anthropic usage: input and output tokens, the input read from the cache.
void anthropic_usage(const Value& usage, Delta& d) {
    d.input_tokens = int_member(usage, "input_tokens");
    d.output_tokens = int_member(usage, "output_tokens");
    d.cached_input_tokens = int_member(usage, "cache_read_input_tokens");
}

/// Gemini usageMetadata: prompt and candidates tokens, cached content, thoughts.
void gemini_usage(const Value& usage, Delta& d) {
    d.input_tokens = int_member(usage, "promptTokenCount");
    d.output_tokens = int_member(usage, "candidatesTokenCount");
    d.cached_input_tokens = int_member(usage, "cachedContentTokenCount");
    d.reasoning_tokens = int_member(usage, "thoughtsTokenCount");
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

/// The same delta gemini() makes, from the Gemini reader's fields.
void append_fast(const detail::EventJson::GeminiChunk& chunk, std::vector<Delta>& out) {
    Delta& d = out.emplace_back();  // in place, as for an OpenAI chunk
    if (chunk.has_text) (chunk.thought ? d.reasoning : d.text).assign(chunk.text);
    if (chunk.has_finish_reason) {
        d.finish_reason = std::string(chunk.finish_reason);
        d.end_of_message = true;
    }
    d.input_tokens = chunk.input_tokens;
    d.output_tokens = chunk.output_tokens;
    d.cached_input_tokens = chunk.cached_input_tokens;
    d.reasoning_tokens = chunk.reasoning_tokens;
    if (!adds_something(d)) out.pop_back();
}

/// Whether the chunk's whole delta is its text: a Delta with nothing but
/// `text` set (what append_fast() would append).
bool is_text_only(const detail::EventJson::OpenAIChunk& chunk) {
    return chunk.has_content && !chunk.has_reasoning_content && !chunk.has_reasoning &&
           !chunk.has_finish_reason && !chunk.has_usage;
}

/// The same for a Gemini chunk: a non-empty text and nothing else (an
/// empty one adds nothing, as gemini() finds).
bool is_text_only(const detail::EventJson::GeminiChunk& chunk) {
    return chunk.has_text && !chunk.thought && !chunk.text.empty() && !chunk.has_finish_reason &&
           !chunk.input_tokens && !chunk.output_tokens && !chunk.cached_input_tokens &&
           !chunk.reasoning_tokens;
}

/// The same for a text or reasoning token event: a non-empty text fragment.
bool is_text_only(const detail::EventJson::TextDelta& delta) {
    return !delta.reasoning && !delta.text.empty();
}

/// The delta anthropic() or responses_event() makes from a text or
/// reasoning token event, from the fast readers' view.
void append_fast(const detail::EventJson::TextDelta& delta, std::vector<Delta>& out) {
    if (delta.text.empty()) return;  // adds nothing, as the document path finds
    Delta& d = out.emplace_back();   // in place, as for an OpenAI chunk
    (delta.reasoning ? d.reasoning : d.text).assign(delta.text);
}

std::string_view text_of(const detail::EventJson::OpenAIChunk& chunk) { return chunk.content; }
std::string_view text_of(const detail::EventJson::GeminiChunk& chunk) { return chunk.text; }
std::string_view text_of(const detail::EventJson::TextDelta& delta) { return delta.text; }

/// A fast reader's event: handed back as text when it is bare text and the
/// caller asked (DeltaParser::parse's `text_only`), else its delta appended.
template <typename Read>
std::optional<Error> hand_out(const Read& read, std::vector<Delta>& out,
                              std::optional<std::string_view>* text_only) {
    if (text_only && is_text_only(read))
        *text_only = text_of(read);
    else
        append_fast(read, out);
    return std::nullopt;
}

void anthropic(std::string_view type, const Value& doc, std::vector<Delta>& out) {
    Delta d;
    if (type == "message_start") {
        if (const Value* message = member(doc, "message"))
            if (const Value* usage = member(*message, "usage")) anthropic_usage(*usage, d);
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
        if (const Value* usage = member(doc, "usage")) anthropic_usage(*usage, d);
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
    if (const Value* usage = member(doc, "usageMetadata")) gemini_usage(*usage, d);
    if (adds_something(d)) out.push_back(std::move(d));
}

}  // namespace

DeltaParser::DeltaParser(Provider provider)
    : provider_(provider), json_(std::make_unique<detail::EventJson>()) {
    if (provider == Provider::openai_responses)
        responses_ = std::make_unique<detail::ResponsesState>();
}
DeltaParser::~DeltaParser() = default;
DeltaParser::DeltaParser(DeltaParser&&) noexcept = default;
DeltaParser& DeltaParser::operator=(DeltaParser&&) noexcept = default;

std::optional<Error> DeltaParser::parse(const nous::http::Event& event, std::vector<Delta>& out) {
    nous::http::EventView view;
    view.type = event.type;
    view.data = event.data;
    return parse(view, out);
}

std::optional<Error> DeltaParser::parse(const nous::http::EventView& event,
                                        std::vector<Delta>& out) {
    return parse_event(event, out, nullptr);
}

std::optional<Error> DeltaParser::parse(const nous::http::EventView& event, std::vector<Delta>& out,
                                        std::optional<std::string_view>& text_only) {
    text_only.reset();
    return parse_event(event, out, &text_only);
}

std::optional<Error> DeltaParser::parse_event(const nous::http::EventView& event,
                                              std::vector<Delta>& out,
                                              std::optional<std::string_view>* text_only) {
    std::string_view data = event.data;
    while (!data.empty() && (data.front() == ' ' || data.front() == '\n' || data.front() == '\r'))
        data.remove_prefix(1);
    if (data.empty()) return std::nullopt;  // keep-alive
    // The common token events without a document (an OpenAI chunk, an
    // Anthropic or Responses text or reasoning delta, a Gemini chunk);
    // anything else below.
    if (fast_paths_) {
        switch (provider_) {
            case Provider::openai:
                if (detail::EventJson::OpenAIChunk chunk; json_->openai_chunk(data, chunk))
                    return hand_out(chunk, out, text_only);
                break;
            case Provider::anthropic:
                if (detail::EventJson::TextDelta delta;
                    json_->anthropic_delta(data, event.type, delta))
                    return hand_out(delta, out, text_only);
                break;
            case Provider::gemini:
                if (detail::EventJson::GeminiChunk chunk; json_->gemini_chunk(data, chunk))
                    return hand_out(chunk, out, text_only);
                break;
            case Provider::openai_responses:
                if (detail::EventJson::TextDelta delta; json_->responses_delta(data, delta))
                    return hand_out(delta, out, text_only);
                break;
        }
    }
    return parse_document(event, data, out);
}

[[gnu::noinline]] std::optional<Error> DeltaParser::parse_document(
    const nous::http::EventView& event, std::string_view data, std::vector<Delta>& out) {
    // Depth-limited: a provider's bytes are server bytes.
    std::string why;
    const Value* parsed = json_->parse(data, why);
    if (!parsed) return malformed(why);
    const Value& root = *parsed;
    switch (provider_) {
        case Provider::openai:
            if (!root.IsObject()) return malformed("an OpenAI chunk is not a JSON object");
            openai(root, openai_calls_, out);
            break;
        case Provider::anthropic: {
            if (!root.IsObject()) return malformed("an Anthropic event is not a JSON object");
            // The data's own "type" names the event (the SSE event name says the same).
            const Value* named = member(root, "type");
            const std::string_view type =
                named && named->IsString()
                    ? std::string_view(named->GetString(), named->GetStringLength())
                    : event.type;
            anthropic(type, root, out);
            break;
        }
        case Provider::gemini:
            if (!root.IsObject() && !root.IsArray())
                return malformed("a Gemini chunk is not a JSON object");
            gemini(root, gemini_calls_, out);
            break;
        case Provider::openai_responses:
            if (!root.IsObject()) return malformed("a Responses event is not a JSON object");
            responses_event(root, *responses_, out);
            break;
    }
    return std::nullopt;
}

Result<ChatResult> parse_chat_response(Provider provider, std::string_view body) {
    auto doc = nous::http::parse_json(body);
    if (!doc) return malformed(doc.error().message);
    const Value& root = *doc.value();
    std::vector<Delta> deltas;
    switch (provider) {
        case Provider::openai: {
            if (!root.IsObject()) return malformed("an OpenAI response is not a JSON object");
            if (const Value* error = member(root, "error"); error && !error->IsNull()) {
                Delta d;
                d.error = error_text(*error);
                deltas.push_back(std::move(d));
                break;
            }
            const Value* choices = member(root, "choices");
            if (!choices || !choices->IsArray())
                return malformed("an OpenAI response without choices");
            for (const Value& choice : choices->GetArray()) {
                if (!is_first_choice(choice)) continue;
                Delta d;
                if (const Value* message = member(choice, "message")) {
                    d.text = string_member(*message, "content").value_or("");
                    openai_reasoning(*message, d);
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
            break;
        }
        case Provider::anthropic: {
            if (!root.IsObject()) return malformed("an Anthropic response is not a JSON object");
            if (string_member(root, "type") == std::optional<std::string>("error")) {
                anthropic("error", root, deltas);
                break;
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
            if (const Value* usage = member(root, "usage")) anthropic_usage(*usage, end);
            deltas.push_back(std::move(end));
            break;
        }
        case Provider::gemini: {
            int calls = 0;
            if (!root.IsObject() && !root.IsArray())
                return malformed("a Gemini response is not a JSON object");
            gemini(root, calls, deltas);
            break;
        }
        case Provider::openai_responses:
            if (!root.IsObject()) return malformed("a Responses response is not a JSON object");
            if (auto bad = responses_whole(root, deltas)) return *bad;
            break;
    }
    Accumulator accumulator;
    for (const Delta& d : deltas) accumulator.add(d);
    ChatResult result = accumulator.result();
    if (result.stream_error) {
        Error e(nous::http::ErrorCode::protocol, *result.stream_error);
        return e;
    }
    result.complete = true;  // a whole body is the whole message
    return result;
}

Error provider_error(Provider provider, Error error) {
    if (error.code != nous::http::ErrorCode::http_status || error.body.empty()) return error;
    auto doc = nous::http::parse_json(error.body);
    if (!doc) return error;  // not JSON: the generic message stays
    const Value& root = *doc.value();
    const Value* object = &root;
    if (root.IsArray() && !root.Empty())
        object = &root[0];  // Gemini wraps errors in an array at times
    const Value* e = member(*object, "error");
    if (!e) return error;
    (void)provider;  // every format's error object reads alike: message (code / type / status)
    error.message = "HTTP " + std::to_string(error.status) + ": " + error_text(*e);
    return error;
}

}  // namespace nous::llm
