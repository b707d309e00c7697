// A call's events under the OpenTelemetry GenAI names (nous/llm/telemetry.hpp).

#include "nous/llm/embed.hpp"
#include "nous/llm/result.hpp"
#include "nous/llm/telemetry.hpp"
#include "telemetry/call_facts.hpp"

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

namespace detail {

CallFacts CallFacts::of(const CallEvent& e) {
    CallFacts f;
    f.operation = e.operation;
    f.provider = e.provider;
    f.model = e.request_model;
    f.server_address = e.server_address;
    f.server_port = e.server_port;
    f.deployment = e.deployment;
    if (e.kind == CallEvent::Kind::failover) f.failover_reason = e.reason;
    f.take_end(e);
    return f;
}

void CallFacts::take_end(const CallEvent& e) {
    if (e.kind == CallEvent::Kind::end) {
        if (e.result) {
            response_id = e.result->request_id;
            finish_reason = e.result->finish_reason.value_or("");
        }
        if (e.embeddings)
            embedding_dimensions = static_cast<std::int64_t>(e.embeddings->dimensions);
        // A chat event built by hand may carry its usage in the result only.
        if (e.usage)
            usage = *e.usage;
        else if (e.result && e.result->usage)
            usage = *e.result->usage;
    }
    error_type = e.error_type;
}

}  // namespace detail

Attributes CallEvent::attributes() const {
    Attributes a;
    struct Collect {
        Attributes& out;
        void operator()(const char* name, std::string_view v) {
            out.emplace_back(name, std::string(v));
        }
        void operator()(const char* name, std::int64_t v) { out.emplace_back(name, v); }
        void operator()(const char* name, detail::OneStringList v) {
            out.emplace_back(name, std::vector<std::string>{std::string(v.value)});
        }
    };
    detail::CallFacts::of(*this).visit(Collect{a});
    return a;
}

}  // namespace nous::llm
