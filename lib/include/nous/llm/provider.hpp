#pragma once
// The four wire formats nous_llm speaks, by name, with their defaults; and
// the result and error types it shares with nous_http. Library nous_llm;
// docs/llm.md.

#include <optional>
#include <string>
#include <string_view>

#include "nous/http/client.hpp"

namespace nous::llm {

using nous::http::Error;
using nous::http::Headers;
template <typename T>
using Result = nous::http::Result<T>;

/// openai: chat completions; openai_responses: the Responses API
/// (POST {base}/responses).
enum class Provider { openai, anthropic, gemini, openai_responses };

/// "openai", "anthropic", "gemini", "openai-responses".
std::string_view to_string(Provider provider) noexcept;
/// The provider of a name above; nullopt for anything else.
std::optional<Provider> provider_from_name(std::string_view name) noexcept;
/// https://api.openai.com/v1 (both OpenAI formats), https://api.anthropic.com/v1,
/// https://generativelanguage.googleapis.com/v1beta.
std::string default_base_url(Provider provider);
/// The environment variable that conventionally holds the provider's key:
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY (the official SDKs read these).
std::string default_api_key_env(Provider provider);

}  // namespace nous::llm
