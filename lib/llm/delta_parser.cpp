// Stream items of the three providers into one Delta type.

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>

#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"

namespace nous::llm {

namespace {

using rapidjson::Value;

const Value* member(const Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string> string_member(const Value& v, const char* name) {
    const Value* m = member(v, name);
    if (!m || !m->IsString()) return std::nullopt;
    return std::string(m->GetString(), m->GetStringLength());
}

std::optional<std::int64_t> int_member(const Value& v, const char* name) {
    const Value* m = member(v, name);
    if (!m || !m->IsInt64()) return std::nullopt;
    return m->GetInt64();
}

std::string compact(const Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v.Accept(w);
    return std::string(buffer.GetString(), buffer.GetSize());
}

/// The provider's message of an error object ({"message":..}), or the object itself.
std::string error_text(const Value& error) {
    if (auto message = string_member(error, "message")) return *message;
    if (error.IsString()) return std::string(error.GetString(), error.GetStringLength());
    return compact(error);
}

/// OpenAI usage: prompt and completion tokens, the cached part of the
/// prompt, the reasoning part of the completion.
void openai_usage(const Value& usage, Delta& d) {
    d.input_tokens = int_member(usage, "prompt_tokens");
    d.output_tokens = int_member(usage, "completion_tokens");
    if (const Value* prompt = member(usage, "prompt_tokens_details"))
        d.cached_input_tokens = int_member(*prompt, "cached_tokens");
    if (const Value* completion = member(usage, "completion_tokens_details"))
        d.reasoning_tokens = int_member(*completion, "reasoning_tokens");
}

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

bool has_usage(const Delta& d) {
    return d.input_tokens || d.output_tokens || d.cached_input_tokens || d.reasoning_tokens;
}

Error malformed(std::string why) {
    return Error(nous::http::ErrorCode::protocol, "malformed provider event: " + why);
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
    if (const Value* error = member(doc, "error"); error && !error->IsNull()) {
        d.error = error_text(*error);
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
        openai_usage(*usage, d);
        any = any || has_usage(d);
    }
    if (any) out.push_back(std::move(d));
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
        } else if (block) {
            d.text = string_member(*block, "text").value_or("");
        }
    } else if (type == "content_block_delta") {
        const Value* delta = member(doc, "delta");
        if (!delta) return;
        const auto kind = string_member(*delta, "type").value_or("");
        if (kind == "text_delta") {
            d.text = string_member(*delta, "text").value_or("");
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
    if (!d.text.empty() || !d.tool_calls.empty() || d.finish_reason || has_usage(d) || d.error ||
        d.end_of_message)
        out.push_back(std::move(d));
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
                        if (auto text = string_member(part, "text")) d.text += *text;
                        if (const Value* fn = member(part, "functionCall")) {
                            ToolCallDelta t;
                            t.index = calls++;
                            t.id = string_member(*fn, "id").value_or("");
                            t.name = string_member(*fn, "name").value_or("");
                            const Value* args = member(*fn, "args");
                            t.arguments = args ? compact(*args) : "{}";
                            d.tool_calls.push_back(std::move(t));
                        }
                    }
            if (auto reason = string_member(candidate, "finishReason")) {
                d.finish_reason = *reason;
                d.end_of_message = true;
            }
        }
    }
    if (const Value* usage = member(doc, "usageMetadata")) gemini_usage(*usage, d);
    if (!d.text.empty() || !d.tool_calls.empty() || d.finish_reason || has_usage(d))
        out.push_back(std::move(d));
}

}  // namespace

std::optional<Error> DeltaParser::parse(const nous::http::Event& event, std::vector<Delta>& out) {
    std::string_view data = event.data;
    while (!data.empty() && (data.front() == ' ' || data.front() == '\n' || data.front() == '\r'))
        data.remove_prefix(1);
    if (data.empty()) return std::nullopt;  // keep-alive
    // Depth-limited: a provider's bytes are server bytes.
    auto doc = nous::http::parse_json(data);
    if (!doc) return malformed(doc.error().message);
    const Value& root = *doc.value();
    switch (provider_) {
        case Provider::openai:
            if (!root.IsObject()) return malformed("an OpenAI chunk is not a JSON object");
            openai(root, openai_calls_, out);
            break;
        case Provider::anthropic: {
            if (!root.IsObject()) return malformed("an Anthropic event is not a JSON object");
            // The data's own "type" names the event (the SSE event name says the same).
            std::string type = string_member(root, "type").value_or(event.type);
            anthropic(type, root, out);
            break;
        }
        case Provider::gemini:
            if (!root.IsObject() && !root.IsArray())
                return malformed("a Gemini chunk is not a JSON object");
            gemini(root, gemini_calls_, out);
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
                openai_usage(*usage, d);
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
    std::string text = error_text(*e);
    if (provider == Provider::gemini)
        if (auto status = string_member(*e, "status")) text += " (" + *status + ")";
    if (provider == Provider::anthropic)
        if (auto type = string_member(*e, "type")) text += " (" + *type + ")";
    error.message = "HTTP " + std::to_string(error.status) + ": " + text;
    return error;
}

}  // namespace nous::llm
