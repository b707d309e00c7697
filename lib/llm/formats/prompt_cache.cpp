// Prompt caching settings: what each format takes, and the OpenAI formats'
// two members (prompt_cache.hpp).

#include "formats/prompt_cache.hpp"

#include "formats/request_json.hpp"

namespace nous::llm::detail {

namespace {

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

void add_string(rapidjson::Document& body, const char* key, const std::string& value) {
    auto& a = body.GetAllocator();
    rapidjson::Value v(value.data(), static_cast<rapidjson::SizeType>(value.size()), a);
    if (auto it = body.FindMember(key); it != body.MemberEnd())
        it->value = v;
    else
        body.AddMember(rapidjson::StringRef(key), v, a);
}

}  // namespace

bool has_cache_settings(const ChatRequest& r) {
    return r.cache || !r.prompt_cache_key.empty() || !r.prompt_cache_retention.empty() ||
           !r.cached_content.empty();
}

std::optional<Error> refuse_cache_settings(const ChatRequest& r, const WireFormat& format,
                                           unsigned allowed) {
    if (r.cache) {
        if (!(allowed & cache_breakpoints))
            return unsupported("cache breakpoints (cache_control)", format);
        const PromptCache& c = *r.cache;
        if (c.automatic && (c.system || c.tools || c.last_message))
            return invalid("cache: automatic stands alone, without breakpoints");
        if (!c.automatic && !c.system && !c.tools && !c.last_message)
            return invalid("cache: automatic, or at least one breakpoint (system, tools, last)");
        if (!c.ttl.empty() && c.ttl != "5m" && c.ttl != "1h")
            return invalid("cache: the ttl is 5m or 1h, not '" + c.ttl + "'");
    }
    if ((!r.prompt_cache_key.empty() || !r.prompt_cache_retention.empty()) &&
        !(allowed & cache_openai_keys))
        return unsupported(
            r.prompt_cache_key.empty() ? "prompt_cache_retention" : "prompt_cache_key", format);
    if (!r.prompt_cache_retention.empty() && r.prompt_cache_retention != "in_memory" &&
        r.prompt_cache_retention != "24h")
        return invalid("prompt_cache_retention is in_memory or 24h, not '" +
                       r.prompt_cache_retention + "'");
    if (!r.cached_content.empty() && !(allowed & cache_cached_content))
        return unsupported("cached_content", format);
    return std::nullopt;
}

std::optional<Error> write_openai_cache(rapidjson::Document& body, const ChatRequest& r,
                                        const WireFormat& format) {
    if (auto bad = refuse_cache_settings(r, format, cache_openai_keys)) return bad;
    if (!r.prompt_cache_key.empty()) add_string(body, "prompt_cache_key", r.prompt_cache_key);
    if (!r.prompt_cache_retention.empty())
        add_string(body, "prompt_cache_retention", r.prompt_cache_retention);
    return std::nullopt;
}

}  // namespace nous::llm::detail
