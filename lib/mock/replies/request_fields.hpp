#pragma once
// Reading a chat request's JSON in the mock's reply formats (nous_mock
// internal): a member, a string, a list of strings.

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nous::http::mock {

inline const rapidjson::Value* find(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

inline std::string string_at(const rapidjson::Value* v) {
    return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

/// A-Z a-z 0-9 by byte value, whatever the locale.
inline bool ascii_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// Whether every byte of `text` is A-Z a-z 0-9 _ - or one of `also` (a
/// provider's pattern for a tool call's id; empty text passes).
inline bool id_bytes(std::string_view text, std::string_view also) {
    for (char c : text)
        if (!ascii_alnum(c) && c != '_' && c != '-' && also.find(c) == std::string_view::npos)
            return false;
    return true;
}

/// A string, or an array of strings (empty ones left out).
inline std::vector<std::string> strings_at(const rapidjson::Value* v) {
    std::vector<std::string> out;
    if (v && v->IsString() && v->GetStringLength() > 0) out.push_back(v->GetString());
    if (v && v->IsArray())
        for (const auto& s : v->GetArray())
            if (s.IsString() && s.GetStringLength() > 0) out.push_back(s.GetString());
    return out;
}

/// tool_choice as both OpenAI formats spell it: "none", "required", or a
/// named function (chat: in "function"; Responses: beside "type").
inline std::optional<std::string> openai_tool_choice(const rapidjson::Value& doc,
                                                     const std::string& first) {
    const rapidjson::Value* choice = find(doc, "tool_choice");
    if (!choice) return std::nullopt;
    if (choice->IsString()) {
        const std::string word = choice->GetString();
        if (word == "none") return std::string();
        return word == "required" ? std::optional<std::string>(first) : std::nullopt;
    }
    if (const rapidjson::Value* fn = find(*choice, "function")) return string_at(find(*fn, "name"));
    return string_at(find(*choice, "name"));
}

}  // namespace nous::http::mock
