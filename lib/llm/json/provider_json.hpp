#pragma once
// Reading provider JSON (nous_llm internal): members by name and type, the
// provider's words of an error object, and what every format's parser shares.

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <optional>
#include <string>

#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"

namespace nous::llm::detail {

using rapidjson::Value;

inline const Value* member(const Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

inline std::optional<std::string> string_member(const Value& v, const char* name) {
    const Value* m = member(v, name);
    if (!m || !m->IsString()) return std::nullopt;
    return std::string(m->GetString(), m->GetStringLength());
}

/// A string member as a view of the document (empty when absent or not a
/// string): for names compared and dropped, such as an event's "type", which
/// as a std::string would be an allocation per event once over 15 bytes.
inline std::string_view view_member(const Value& v, const char* name) {
    const Value* m = member(v, name);
    if (!m || !m->IsString()) return {};
    return {m->GetString(), m->GetStringLength()};
}

inline std::optional<std::int64_t> int_member(const Value& v, const char* name) {
    const Value* m = member(v, name);
    if (!m || !m->IsInt64()) return std::nullopt;
    return m->GetInt64();
}

/// A JSON pointer's reference token for a member name (RFC 6901: ~ as ~0,
/// / as ~1): the schema checks name the node they refuse by its pointer.
inline std::string pointer_token(std::string_view key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

inline std::string compact(const Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v.Accept(w);
    return std::string(buffer.GetString(), buffer.GetSize());
}

/// The provider's words of an error object: its message, with its code or
/// type when it has one ("Overloaded (overloaded_error)"); a string as it is;
/// anything else as compact JSON.
inline std::string error_text(const Value& error) {
    if (auto message = string_member(error, "message")) {
        std::optional<std::string> code = string_member(error, "code");
        if (!code) code = string_member(error, "type");
        if (!code) code = string_member(error, "status");
        if (!code)
            if (auto number = int_member(error, "code")) code = std::to_string(*number);
        return code && !code->empty() && *code != *message ? *message + " (" + *code + ")"
                                                           : *message;
    }
    if (error.IsString()) return std::string(error.GetString(), error.GetStringLength());
    return compact(error);
}

/// The names of an OpenAI-style usage object: chat completions say
/// prompt/completion, the Responses API input/output; both nest the cached
/// input and the reasoning output in `*_details` objects.
struct UsageNames {
    const char* input;
    const char* output;
    const char* input_details;
    const char* output_details;
};
inline constexpr UsageNames kChatUsage{"prompt_tokens", "completion_tokens",
                                       "prompt_tokens_details", "completion_tokens_details"};
inline constexpr UsageNames kResponsesUsage{"input_tokens", "output_tokens", "input_tokens_details",
                                            "output_tokens_details"};

inline void openai_style_usage(const Value& usage, const UsageNames& names, Delta& d) {
    d.input_tokens = int_member(usage, names.input);
    d.output_tokens = int_member(usage, names.output);
    if (const Value* input = member(usage, names.input_details))
        d.cached_input_tokens = int_member(*input, "cached_tokens");
    if (const Value* output = member(usage, names.output_details))
        d.reasoning_tokens = int_member(*output, "reasoning_tokens");
}

inline bool has_usage(const Delta& d) {
    return d.input_tokens || d.output_tokens || d.cached_input_tokens ||
           d.cache_write_input_tokens || d.reasoning_tokens;
}

/// Whether a delta adds anything to the message.
inline bool adds_something(const Delta& d) {
    return !d.text.empty() || !d.reasoning.empty() || !d.reasoning_signature.empty() ||
           !d.refusal.empty() || !d.reasoning_id.empty() || !d.reasoning_redacted.empty() ||
           !d.tool_calls.empty() || d.finish_reason || has_usage(d) || d.error || d.end_of_message;
}

inline Error malformed(std::string why) {
    return Error(nous::http::ErrorCode::protocol, "malformed provider event: " + why);
}

}  // namespace nous::llm::detail
