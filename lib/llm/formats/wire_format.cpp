// The formats' table, and what every format reads alike.

#include "formats/wire_format.hpp"

#include <array>

#include "provider_json.hpp"

namespace nous::llm::detail {

const WireFormat& openai_chat_format() noexcept;
const WireFormat& openai_responses_format() noexcept;
const WireFormat& anthropic_format() noexcept;
const WireFormat& gemini_format() noexcept;

namespace {

/// Every format, in the order of Provider's enumerators.
const std::array<const WireFormat*, 4>& formats() noexcept {
    static const std::array<const WireFormat*, 4> all = {
        &openai_chat_format(), &anthropic_format(), &gemini_format(), &openai_responses_format()};
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

std::string WireFormat::error_message(const rapidjson::Value& root) const {
    // Every format's error object reads alike: {"error":{"message", "code" | "type" |
    // "status"}} (Anthropic's beside "type":"error"); Gemini wraps it in an array at times.
    const rapidjson::Value* object = &root;
    if (root.IsArray() && !root.Empty()) object = &root[0];
    const rapidjson::Value* e = member(*object, "error");
    return e ? error_text(*e) : std::string();
}

}  // namespace nous::llm::detail
