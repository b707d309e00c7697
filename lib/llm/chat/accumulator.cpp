// Deltas into the final message, and the message as JSON.

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "nous/llm/chat.hpp"

namespace nous::llm {

void Accumulator::add(const Delta& delta) {
    partial_.text += delta.text;
    partial_.reasoning.text += delta.reasoning;
    if (!delta.refusal.empty()) {
        if (!partial_.refusal) partial_.refusal.emplace();
        *partial_.refusal += delta.refusal;
    }
    // A signature or item id arrives whole (Anthropic's signature_delta, a
    // Gemini part's thoughtSignature, a Responses item): the last one wins.
    if (!delta.reasoning_signature.empty())
        partial_.reasoning.signature = delta.reasoning_signature;
    if (!delta.reasoning_id.empty()) partial_.reasoning.id = delta.reasoning_id;
    if (!delta.reasoning_redacted.empty())
        partial_.reasoning.redacted.push_back(delta.reasoning_redacted);
    for (const ToolCallDelta& piece : delta.tool_calls) {
        auto [at, added] = call_at_.try_emplace(piece.index, calls_.size());
        if (added) calls_.push_back(Call{piece.index, {}});
        Call& call = calls_[at->second];
        if (!piece.id.empty()) call.call.id = piece.id;
        if (!piece.name.empty()) call.call.name = piece.name;
        if (!piece.signature.empty()) call.call.signature = piece.signature;
        call.call.arguments += piece.arguments;
    }
    if (delta.input_tokens) {
        usage_.input_tokens = *delta.input_tokens;
        any_usage_ = true;
    }
    if (delta.output_tokens) {
        usage_.output_tokens = *delta.output_tokens;
        any_usage_ = true;
    }
    // Cumulative, like the counts above: the last value, never a sum.
    if (delta.cached_input_tokens) usage_.cached_input_tokens = *delta.cached_input_tokens;
    if (delta.cache_write_input_tokens)
        usage_.cache_write_input_tokens = *delta.cache_write_input_tokens;
    if (delta.cache_write_1h_input_tokens)
        usage_.cache_write_1h_input_tokens = *delta.cache_write_1h_input_tokens;
    if (delta.reasoning_tokens) usage_.reasoning_tokens = *delta.reasoning_tokens;
    if (delta.finish_reason) partial_.finish_reason = delta.finish_reason;
    if (delta.end_of_message) partial_.complete = true;
    if (delta.error && !partial_.stream_error) partial_.stream_error = delta.error;
}

ChatResult Accumulator::result() const {
    ChatResult r = partial_;
    std::vector<Call> ordered = calls_;
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const Call& a, const Call& b) { return a.index < b.index; });
    for (auto& c : ordered) {
        ToolCall call = c.call;
        // A call whose arguments never came (an empty input) has the empty object.
        if (call.arguments.empty()) call.arguments = "{}";
        r.tool_calls.push_back(std::move(call));
    }
    if (any_usage_) r.usage = usage_;
    return r;
}

std::string to_json(const ChatResult& result) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    auto str = [&](const std::string& s) {
        w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    };
    w.StartObject();
    w.Key("text");
    str(result.text);
    w.Key("tool_calls");
    w.StartArray();
    for (const auto& call : result.tool_calls) {
        w.StartObject();
        w.Key("id");
        str(call.id);
        w.Key("name");
        str(call.name);
        w.Key("arguments");
        str(call.arguments);
        w.EndObject();
    }
    w.EndArray();
    w.Key("finish_reason");
    if (result.finish_reason)
        str(*result.finish_reason);
    else
        w.Null();
    w.Key("usage");
    if (result.usage) {
        w.StartObject();
        w.Key("input_tokens");
        w.Int64(result.usage->input_tokens);
        w.Key("output_tokens");
        w.Int64(result.usage->output_tokens);
        w.Key("cached_input_tokens");
        w.Int64(result.usage->cached_input_tokens);
        w.Key("cache_write_input_tokens");
        w.Int64(result.usage->cache_write_input_tokens);
        w.Key("reasoning_tokens");
        w.Int64(result.usage->reasoning_tokens);
        w.EndObject();
    } else {
        w.Null();
    }
    w.Key("reasoning");
    str(result.reasoning.text);
    w.Key("request_id");
    if (result.request_id.empty())
        w.Null();
    else
        str(result.request_id);
    // Remaining budget, and resets in ms from the response's arrival.
    w.Key("rate_limit");
    if (const auto& rl = result.rate_limit) {
        auto count = [&](const char* key, const std::optional<std::int64_t>& v) {
            w.Key(key);
            if (v)
                w.Int64(*v);
            else
                w.Null();
        };
        auto reset = [&](const char* key, const std::optional<RateLimit::Time>& when) {
            w.Key(key);
            if (when)
                w.Int64(
                    std::chrono::duration_cast<std::chrono::milliseconds>(*when - rl->received_at)
                        .count());
            else
                w.Null();
        };
        w.StartObject();
        count("requests_remaining", rl->requests_remaining);
        count("tokens_remaining", rl->tokens_remaining);
        reset("requests_reset_ms", rl->requests_reset);
        reset("tokens_reset_ms", rl->tokens_reset);
        w.EndObject();
    } else {
        w.Null();
    }
    if (result.refusal) {
        w.Key("refusal");
        str(*result.refusal);
    }
    // A structured output: the value, or null when there is none.
    if (result.structured) {
        w.Key("parsed");
        if (result.parsed) {
            const std::string parsed = result.parsed->to_json();
            w.RawValue(parsed.data(), parsed.size(), rapidjson::kObjectType);
        } else {
            w.Null();
        }
    }
    // The message to append to a --messages file for the next turn.
    w.Key("message");
    const std::string message = message_to_json(result.message());
    w.RawValue(message.data(), message.size(), rapidjson::kObjectType);
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace nous::llm
