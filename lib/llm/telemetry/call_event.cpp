// A call's events under the OpenTelemetry GenAI names (nous/llm/telemetry.hpp).

#include "nous/llm/embed.hpp"
#include "nous/llm/result.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm {

std::string_view otel_provider_name(Provider provider) noexcept {
    switch (provider) {
        case Provider::anthropic:
            return "anthropic";
        case Provider::gemini:
            return "gcp.gemini";
        case Provider::azure:
        case Provider::azure_responses:
            return "azure.ai.openai";
        case Provider::bedrock:
            return "aws.bedrock";
        case Provider::vertex:
        case Provider::vertex_anthropic:
            return "gcp.vertex_ai";
        case Provider::openai:
        case Provider::openai_responses:
            break;
    }
    return "openai";
}

Attributes CallEvent::attributes() const {
    Attributes a;
    a.emplace_back("gen_ai.operation.name", std::string(operation));
    a.emplace_back("gen_ai.provider.name", std::string(provider));
    a.emplace_back("gen_ai.request.model", std::string(request_model));
    if (!server_address.empty()) {
        a.emplace_back("server.address", std::string(server_address));
        a.emplace_back("server.port", server_port);
    }
    if (!deployment.empty()) a.emplace_back("nous.deployment", std::string(deployment));
    if (kind == Kind::failover) a.emplace_back("nous.failover.reason", std::string(reason));
    if (kind == Kind::end && result) {
        if (!result->request_id.empty()) a.emplace_back("gen_ai.response.id", result->request_id);
        if (result->finish_reason)
            a.emplace_back("gen_ai.response.finish_reasons",
                           std::vector<std::string>{*result->finish_reason});
    }
    if (kind == Kind::end && embeddings)
        a.emplace_back("gen_ai.embeddings.dimension.count",
                       static_cast<std::int64_t>(embeddings->dimensions));
    const Usage* used = usage ? usage : result && result->usage ? &*result->usage : nullptr;
    if (kind == Kind::end && used) {
        a.emplace_back("gen_ai.usage.input_tokens", used->input_tokens);
        if (operation != "embeddings")
            a.emplace_back("gen_ai.usage.output_tokens", used->output_tokens);
        if (used->cached_input_tokens > 0)
            a.emplace_back("gen_ai.usage.cache_read.input_tokens", used->cached_input_tokens);
        if (used->cache_write_input_tokens > 0)
            a.emplace_back("gen_ai.usage.cache_creation.input_tokens",
                           used->cache_write_input_tokens);
        if (used->reasoning_tokens > 0)
            a.emplace_back("nous.usage.reasoning_tokens", used->reasoning_tokens);
    }
    if (!error_type.empty()) a.emplace_back("error.type", std::string(error_type));
    return a;
}

}  // namespace nous::llm
