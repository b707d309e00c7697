// The formats' table, and what every format reads alike.

#include "formats/wire_format.hpp"

#include <array>

#include "formats/prompt_cache.hpp"
#include "json/provider_json.hpp"

namespace nous::llm::detail {

const WireFormat& openai_chat_format() noexcept;
const WireFormat& openai_responses_format() noexcept;
const WireFormat& anthropic_format() noexcept;
const WireFormat& gemini_format() noexcept;
const WireFormat& azure_chat_format() noexcept;
const WireFormat& azure_responses_format() noexcept;
const WireFormat& bedrock_format() noexcept;
const WireFormat& vertex_format() noexcept;
const WireFormat& vertex_anthropic_format() noexcept;

namespace {

/// Every format, in the order of Provider's enumerators.
const std::array<const WireFormat*, 9>& formats() noexcept {
    static const std::array<const WireFormat*, 9> all = {
        &openai_chat_format(),      &anthropic_format(),  &gemini_format(),
        &openai_responses_format(), &azure_chat_format(), &azure_responses_format(),
        &bedrock_format(),          &vertex_format(),     &vertex_anthropic_format()};
    static_assert(static_cast<std::size_t>(Provider::vertex_anthropic) + 1 == 9,
                  "every Provider has its format here, in the enumerators' order");
    return all;
}

}  // namespace

const WireFormat& wire_format(Provider provider) noexcept {
    return *formats()[static_cast<std::size_t>(provider)];
}

const WireFormat* wire_format_named(std::string_view name) noexcept {
    for (const WireFormat* format : formats())
        if (format->name() == name) return format;
    return nullptr;
}

std::string base_url_of(const WireFormat& format, const std::string& base) {
    std::string url = base.empty() ? std::string(format.default_base_url()) : base;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

void add_caller_headers(Headers& ours, const Headers& caller) {
    // (A plain loop variable, not a structured binding: clang 14, which builds the
    // fuzz targets, cannot capture a structured binding in a lambda.)
    for (const auto& caller_header : caller)
        std::erase_if(ours, [&](const auto& h) {
            return nous::http::header_name_equals(h.first, caller_header.first);
        });
    ours.insert(ours.end(), caller.begin(), caller.end());
}

std::optional<Error> WireFormat::write_cache(rapidjson::Document&,
                                             const ChatRequest& request) const {
    return refuse_cache_settings(request, *this, no_cache_fields);
}

std::optional<Error> WireFormat::count_request(const ChatRequest&, const std::string&, std::string&,
                                               rapidjson::Document&) const {
    return Error(nous::http::ErrorCode::invalid_argument,
                 std::string(name()) + " has no token counter (count_tokens)");
}

std::string WireFormat::error_message(const rapidjson::Value& root) const {
    // Every format's error object reads alike: {"error":{"message", "code" | "type" |
    // "status"}} (Anthropic's beside "type":"error"); Gemini wraps it in an array at times.
    const rapidjson::Value* object = &root;
    if (root.IsArray() && !root.Empty()) object = &root[0];
    const rapidjson::Value* e = member(*object, "error");
    return e ? error_text(*e) : std::string();
}

}  // namespace nous::llm::detail
