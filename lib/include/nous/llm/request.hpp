#pragma once
// A chat request, and the HTTP call it becomes in its provider's format.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nous/llm/conversation.hpp"
#include "nous/llm/provider.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm {

class PriceTable;

/// Which tools the model may call (OpenAI `tool_choice`, Anthropic
/// `tool_choice`, Gemini `toolConfig.functionCallingConfig`).
struct ToolChoice {
    enum class Mode {
        automatic,  ///< the model decides (OpenAI "auto", Anthropic auto, Gemini AUTO)
        none,       ///< no tool call ("none", Anthropic none, Gemini NONE)
        required,   ///< some tool call ("required", Anthropic any, Gemini ANY)
        named,      ///< this tool (`name`)
    };
    Mode mode = Mode::automatic;
    std::string name;  ///< Mode::named

    /// "auto", "none", "required", or any other text as a tool's name.
    static ToolChoice from_name(std::string_view name);
};

/// A structured output: the answer is JSON, following `schema` when one is
/// given. docs/llm.md, "Structured outputs": each provider's field, and the
/// schema rules each one checks before sending.
struct ResponseFormat {
    enum class Kind {
        json_schema,  ///< JSON valid against `schema`
        json_object,  ///< any JSON object (OpenAI json_object, Gemini application/json)
    };
    Kind kind = Kind::json_schema;
    std::string name = "response";  ///< the schema's name (the OpenAI formats send it)
    std::string schema;             ///< a JSON Schema object as JSON text
    /// OpenAI's strict mode (both OpenAI formats): the provider guarantees the
    /// schema, and takes only its strict dialect (checked before sending).
    bool strict = true;
};

/// Prompt caching breakpoints (docs/cost.md, "Prompt caching"): Anthropic's
/// `cache_control`. `automatic` is its top-level switch and stands alone;
/// the breakpoints cache the prompt up to the end of each part named.
struct PromptCache {
    bool automatic = false;
    bool system = false;        ///< the system prompt's last block
    bool tools = false;         ///< the last tool
    bool last_message = false;  ///< the last content block of the last message
    std::string ttl{};          ///< "5m" or "1h"; empty: the provider's (5 minutes)
};

struct ChatRequest {
    Provider provider = Provider::openai;
    std::string base_url;  ///< empty: default_base_url(provider)
    std::string api_key;   ///< empty: no credential header
    std::string model;     ///< required
    std::string system;    ///< empty: no system prompt
    std::vector<ChatMessage> messages;
    /// Anthropic requires one: 1024 is sent when unset. Others: none unless set.
    std::optional<int> max_tokens;
    std::optional<double> temperature;
    std::vector<ToolSpec> tools;
    /// Asks for reasoning (and, where the provider can, its text); none when unset.
    std::optional<ReasoningEffort> reasoning_effort;
    std::optional<ToolChoice> tool_choice;
    /// false: at most one tool call a turn (OpenAI formats; Anthropic
    /// `disable_parallel_tool_use`). Gemini has no such switch.
    std::optional<bool> parallel_tool_calls;
    std::vector<std::string> stop;  ///< stop sequences (not the Responses API)
    std::optional<double> top_p;
    std::optional<std::int64_t> seed;  ///< OpenAI chat and Gemini only
    std::optional<ResponseFormat> response_format;
    /// A JSON object merged into the body last: an object merges into ours
    /// of the same name recursively, any other value replaces ours. Fields
    /// we do not model, such as `service_tier` or vLLM's `guided_json`.
    /// Empty: none.
    std::string extra_body;
    bool stream = true;
    /// Cache breakpoints (Anthropic); refused by the formats that cache by
    /// themselves or by name (docs/cost.md).
    std::optional<PromptCache> cache;
    /// The OpenAI formats: `prompt_cache_key` (requests that share one share
    /// a cache) and `prompt_cache_retention` ("in_memory" or "24h"); empty: none.
    std::string prompt_cache_key, prompt_cache_retention;
    /// Gemini: `cachedContent`, the name of a cache made beforehand
    /// ("cachedContents/..."); empty: none.
    std::string cached_content;
    /// Anthropic Messages: the `anthropic-version` header; empty: 2023-06-01.
    /// From 2026-10-21 on, its request type has no temperature or top_p, and
    /// a request that sets them is refused. The other formats have no version
    /// header and leave it unread (a router may send one request to several).
    std::string anthropic_version;
    /// Azure: `api-version=V` on the query of every URL (required with the
    /// deployments form of the base URL); empty: none. Others leave it unread.
    std::string api_version;
    /// Bedrock: the AWS region; empty: AWS_REGION, else AWS_DEFAULT_REGION.
    std::string region;
    /// Vertex AI: the project (empty: GOOGLE_CLOUD_PROJECT, else the key
    /// file's project_id) and location (empty: GOOGLE_CLOUD_LOCATION, else global).
    std::string project, location;
    /// Sent after the provider's headers; one with the same name replaces the provider's.
    Headers headers;
    /// Prices the call (ChatResult::cost, docs/cost.md); nullptr: no cost.
    std::shared_ptr<const PriceTable> prices;
    /// Told of the call's life (docs/telemetry.md); nullptr: the router's,
    /// else set_default_observer()'s, else none (and no cost at all).
    std::shared_ptr<Observer> observer;
    /// The application's current span as a W3C `traceparent`
    /// ("00-<trace id>-<span id>-<flags>"): an OtlpExporter makes the call's
    /// span its child, in the same trace (and, as OpenTelemetry's default
    /// sampler does, exports nothing for a parent not sampled). Empty, or not
    /// a traceparent: the call's span is a root.
    std::string trace_parent;
};

/// The HTTP request a ChatRequest becomes.
struct HttpCall {
    std::string url;
    Headers headers;  ///< Content-Type, the provider's credential header, anthropic-version
    std::string body;
};

/// OpenAI: POST {base}/chat/completions, Authorization: Bearer; streams ask for
/// the usage chunk (stream_options.include_usage). Anthropic: POST
/// {base}/messages, x-api-key, anthropic-version: 2023-06-01. Gemini: POST
/// {base}/models/{model}:streamGenerateContent?alt=sse (or :generateContent),
/// x-goog-api-key. invalid_argument, before anything is sent, for a missing
/// model, a tool schema that is not a JSON object, a field the provider does
/// not take (naming the field and the provider), a response schema the
/// provider would refuse (naming the JSON pointer and the rule), or an
/// extra_body that is not a JSON object.
Result<HttpCall> build_chat_call(const ChatRequest& request);

}  // namespace nous::llm
