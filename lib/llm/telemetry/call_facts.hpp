#pragma once
// What a call's events say of it, kept (nous_llm internal): the fields behind
// the GenAI attributes, owned, and the one place their names are written.
// CallEvent::attributes() and the OTLP exporter's spans both visit them, so
// that a span is kept and encoded without building an Attributes vector of
// strings per event. docs/telemetry.md lists the attributes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nous/llm/delta.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm::detail {

/// A list of one string (gen_ai.response.finish_reasons), as a visitor sees it.
struct OneStringList {
    std::string_view value;
};

struct CallFacts {
    std::string operation, provider, model, server_address, deployment;
    std::int64_t server_port = 0;
    std::string failover_reason;  ///< a failover's
    // the end's
    std::string response_id, finish_reason, error_type;
    std::optional<Usage> usage;
    std::int64_t embedding_dimensions = -1;  ///< an embeddings call's; -1: none

    /// The facts `event` gives: the common ones, and its kind's own.
    static CallFacts of(const CallEvent& event);
    /// What an end or an error adds (the response, the usage, error.type).
    void take_end(const CallEvent& event);

    /// Calls `visit(name, value)` for each attribute, in a fixed order;
    /// value: std::string_view, std::int64_t or OneStringList.
    template <typename Visitor>
    void visit(Visitor&& visit) const {
        visit("gen_ai.operation.name", std::string_view(operation));
        visit("gen_ai.provider.name", std::string_view(provider));
        visit("gen_ai.request.model", std::string_view(model));
        if (!server_address.empty()) {
            visit("server.address", std::string_view(server_address));
            visit("server.port", server_port);
        }
        if (!deployment.empty()) visit("nous.deployment", std::string_view(deployment));
        if (!failover_reason.empty())
            visit("nous.failover.reason", std::string_view(failover_reason));
        if (!response_id.empty()) visit("gen_ai.response.id", std::string_view(response_id));
        if (!finish_reason.empty())
            visit("gen_ai.response.finish_reasons", OneStringList{finish_reason});
        if (embedding_dimensions >= 0)
            visit("gen_ai.embeddings.dimension.count", embedding_dimensions);
        if (usage) {
            visit("gen_ai.usage.input_tokens", usage->input_tokens);
            if (operation != "embeddings")
                visit("gen_ai.usage.output_tokens", usage->output_tokens);
            if (usage->cached_input_tokens > 0)
                visit("gen_ai.usage.cache_read.input_tokens", usage->cached_input_tokens);
            if (usage->cache_write_input_tokens > 0)
                visit("gen_ai.usage.cache_creation.input_tokens", usage->cache_write_input_tokens);
            if (usage->reasoning_tokens > 0)
                visit("nous.usage.reasoning_tokens", usage->reasoning_tokens);
        }
        if (!error_type.empty()) visit("error.type", std::string_view(error_type));
    }
};

}  // namespace nous::llm::detail
