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
/// (POST {base}/responses). azure, azure_responses: the same two formats at
/// an Azure OpenAI resource (docs/platforms.md): a base URL is required, the
/// key goes in `api-key` (else AZURE_OPENAI_AD_TOKEN as a bearer), and
/// ChatRequest::api_version goes on the query.
/// bedrock: the Bedrock Converse API at a region, signed with SigV4
/// (docs/platforms.md).
enum class Provider {
    openai,
    anthropic,
    gemini,
    openai_responses,
    azure,
    azure_responses,
    bedrock,
    vertex,           ///< Gemini models on Vertex AI (docs/platforms.md)
    vertex_anthropic  ///< Anthropic models on Vertex AI
};

/// "openai", "anthropic", "gemini", "openai-responses", "azure", "azure-responses", "bedrock",
/// "vertex", "vertex-anthropic".
std::string_view to_string(Provider provider) noexcept;
/// The provider of a name above; nullopt for anything else.
std::optional<Provider> provider_from_name(std::string_view name) noexcept;
/// https://api.openai.com/v1 (both OpenAI formats), https://api.anthropic.com/v1,
/// https://generativelanguage.googleapis.com/v1beta.
std::string default_base_url(Provider provider);
/// The environment variable that conventionally holds the provider's key:
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, AZURE_OPENAI_API_KEY
/// (the official SDKs read these). Azure has no default base URL ("").
std::string default_api_key_env(Provider provider);

}  // namespace nous::llm
