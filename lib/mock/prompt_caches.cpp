// The mock's prompt cache (prompt_caches.hpp).

#include "prompt_caches.hpp"

#include <rapidjson/document.h>

#include <functional>
#include <optional>
#include <vector>

#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

/// The TTL of the first member named `marker` anywhere in `doc` (its "ttl"
/// "1h" is an hour, else five minutes), or nothing when there is none.
std::optional<std::chrono::seconds> marked(const rapidjson::Value& doc, const char* marker) {
    std::vector<const rapidjson::Value*> todo{&doc};  // without recursion: a body may nest deep
    while (!todo.empty()) {
        const rapidjson::Value* v = todo.back();
        todo.pop_back();
        if (v->IsArray()) {
            for (const auto& e : v->GetArray()) todo.push_back(&e);
        } else if (v->IsObject()) {
            for (const auto& m : v->GetObject()) {
                if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == marker)
                    return string_at(find(m.value, "ttl")) == "1h" ? std::chrono::seconds(3600)
                                                                   : std::chrono::seconds(300);
                todo.push_back(&m.value);
            }
        }
    }
    return std::nullopt;
}

}  // namespace

void PromptCaches::apply(Format format, const MockRequest& request, Reply& reply) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(request.body.c_str(), request.body.size());
    if (doc.HasParseError() || !doc.IsObject()) return;
    std::optional<std::chrono::seconds> ttl;
    bool writes = true;  // Anthropic and Bedrock bill a write; OpenAI caches without one
    switch (format) {
        case Format::anthropic:
            ttl = marked(doc, "cache_control");
            break;
        case Format::bedrock:
            ttl = marked(doc, "cachePoint");
            break;
        case Format::openai:
        case Format::responses:
            if (!find(doc, "prompt_cache_key")) break;
            ttl = string_at(find(doc, "prompt_cache_retention")) == "24h"
                      ? std::chrono::seconds(86400)
                      : std::chrono::seconds(300);
            writes = false;
            break;
        case Format::gemini:
            break;
    }
    if (!ttl) return;
    // The same request again reads what the first one wrote.
    const std::string key =
        std::to_string(static_cast<int>(format)) + "\n" + request.target + "\n" + request.body;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    auto it = until_.find(key);
    if (it != until_.end() && now < it->second) {
        reply.cache_read = reply.prompt_tokens;
    } else if (writes) {
        reply.cache_write = reply.prompt_tokens;
    }
    until_[key] = now + *ttl;
}

}  // namespace nous::http::mock
