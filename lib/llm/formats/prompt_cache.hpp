#pragma once
// Prompt caching settings (nous_llm internal; docs/cost.md): what each
// format takes, checked before any byte, and the OpenAI formats' two
// members. Anthropic's breakpoints are its own (formats/anthropic/).

#include <optional>

#include "formats/wire_format.hpp"

namespace nous::llm::detail {

/// The cache settings a format takes, as bits.
enum CacheFields : unsigned {
    no_cache_fields = 0,
    cache_breakpoints = 1,     ///< ChatRequest::cache (Anthropic cache_control)
    cache_openai_keys = 2,     ///< prompt_cache_key, prompt_cache_retention
    cache_cached_content = 4,  ///< Gemini cachedContent
};

/// A setting `request` has that `allowed` leaves out: invalid_argument
/// naming it and the format; and each setting's own values checked.
std::optional<Error> refuse_cache_settings(const ChatRequest& request, const WireFormat& format,
                                           unsigned allowed);
/// The OpenAI formats: prompt_cache_key and prompt_cache_retention into `body`.
std::optional<Error> write_openai_cache(rapidjson::Document& body, const ChatRequest& request,
                                        const WireFormat& format);
/// Whether the request has any cache setting (the body is then written twice).
bool has_cache_settings(const ChatRequest& request);

}  // namespace nous::llm::detail
