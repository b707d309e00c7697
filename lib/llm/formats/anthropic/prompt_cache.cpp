// Anthropic's prompt caching: `cache_control` at the top (automatic), or
// on the last system block, the last tool and the last content block of the
// last message, with the TTL (docs/cost.md). At most 4 breakpoints: three
// at most are written.

#include "formats/anthropic/prompt_cache.hpp"

#include "formats/prompt_cache.hpp"

namespace nous::llm::detail {

namespace {

using rapidjson::Value;

Value cache_control(const PromptCache& cache, rapidjson::Document::AllocatorType& a) {
    Value c(rapidjson::kObjectType);
    c.AddMember("type", "ephemeral", a);
    if (!cache.ttl.empty()) c.AddMember("ttl", Value(cache.ttl.c_str(), a), a);
    return c;
}

/// A string content as one text block, so that a block can carry the breakpoint.
void as_blocks(Value& content, rapidjson::Document::AllocatorType& a) {
    if (!content.IsString()) return;
    Value block(rapidjson::kObjectType);
    block.AddMember("type", "text", a);
    block.AddMember("text", Value(content, a), a);
    content.SetArray();
    content.PushBack(block, a);
}

Error missing(const char* what) {
    return Error(nous::http::ErrorCode::invalid_argument,
                 std::string("cache: a breakpoint on ") + what + ", which the request has none of");
}

}  // namespace

std::optional<Error> write_anthropic_cache(rapidjson::Document& body, const ChatRequest& r,
                                           const WireFormat& format) {
    if (auto bad = refuse_cache_settings(r, format, cache_breakpoints)) return bad;
    const PromptCache& cache = *r.cache;
    auto& a = body.GetAllocator();
    if (cache.automatic) {
        body.AddMember("cache_control", cache_control(cache, a), a);
        return std::nullopt;
    }
    if (cache.system) {
        auto it = body.FindMember("system");
        if (it == body.MemberEnd()) return missing("the system prompt");
        as_blocks(it->value, a);
        it->value[it->value.Size() - 1].AddMember("cache_control", cache_control(cache, a), a);
    }
    if (cache.tools) {
        auto it = body.FindMember("tools");
        if (it == body.MemberEnd() || it->value.Empty()) return missing("the tools");
        it->value[it->value.Size() - 1].AddMember("cache_control", cache_control(cache, a), a);
    }
    if (cache.last_message) {
        Value& messages = body["messages"];
        if (messages.Empty()) return missing("a message");
        Value& content = messages[messages.Size() - 1]["content"];
        as_blocks(content, a);
        if (content.Empty()) return missing("a message's content");
        content[content.Size() - 1].AddMember("cache_control", cache_control(cache, a), a);
    }
    return std::nullopt;
}

}  // namespace nous::llm::detail
