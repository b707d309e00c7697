// Bedrock's prompt caching: a `cachePoint` block after the system prompt,
// after the last tool, and after the last content block of the last message,
// each with the TTL when one is asked (docs/cost.md). Converse has no
// automatic caching: `automatic` is refused, naming it.

#include "formats/prompt_cache.hpp"

#include "formats/bedrock_converse/bedrock_converse.hpp"
#include "formats/request_json.hpp"

namespace nous::llm::detail {

namespace {

using rapidjson::Value;

Value cache_point(const PromptCache& cache, rapidjson::Document::AllocatorType& a) {
    Value point(rapidjson::kObjectType);
    point.AddMember("type", "default", a);
    if (!cache.ttl.empty()) point.AddMember("ttl", Value(cache.ttl.c_str(), a), a);
    Value block(rapidjson::kObjectType);
    block.AddMember("cachePoint", point, a);
    return block;
}

Error missing(const char* what) {
    return Error(nous::http::ErrorCode::invalid_argument,
                 std::string("cache: a breakpoint on ") + what + ", which the request has none of");
}

}  // namespace

std::optional<Error> write_converse_cache(rapidjson::Document& body, const ChatRequest& r,
                                          const WireFormat& format) {
    if (auto bad = refuse_cache_settings(r, format, cache_breakpoints)) return bad;
    const PromptCache& cache = *r.cache;
    if (cache.automatic)
        return unsupported(
            "automatic prompt caching (Converse caches at cachePoint blocks: name "
            "the breakpoints, system, tools or last)",
            format);
    auto& a = body.GetAllocator();
    if (cache.system) {
        auto it = body.FindMember("system");
        if (it == body.MemberEnd()) return missing("the system prompt");
        it->value.PushBack(cache_point(cache, a), a);
    }
    if (cache.tools) {
        auto config = body.FindMember("toolConfig");
        if (config == body.MemberEnd()) return missing("the tools");
        config->value["tools"].PushBack(cache_point(cache, a), a);
    }
    if (cache.last_message) {
        Value& messages = body["messages"];
        if (messages.Empty()) return missing("a message");
        Value& content = messages[messages.Size() - 1]["content"];
        if (content.Empty()) return missing("a message's content");
        content.PushBack(cache_point(cache, a), a);
    }
    return std::nullopt;
}

}  // namespace nous::llm::detail
