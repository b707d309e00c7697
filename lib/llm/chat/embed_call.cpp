// embed() as an observed call: its start and its end or error told to the
// request's observer (else the default one) under operation "embeddings",
// as run_chat tells a chat call's (nous/llm/embed.hpp, docs/telemetry.md).

#include "embeddings/run_embed.hpp"
#include "telemetry/call_observation.hpp"

namespace nous::llm {

Result<Embeddings> embed(const EmbedRequest& request, const nous::http::Options& options) {
    Observer* observer = detail::observer_of(request);
    if (!observer) return detail::run_embed(request, options);
    detail::CallObservation observation(*observer, "embeddings");
    observation.set_target(request.provider, request.model, request.base_url);
    observation.set_trace_parent(request.trace_parent);
    observation.emit(CallEvent::Kind::start);
    auto result = detail::run_embed(request, options);
    observation.finish(result);
    return result;
}

}  // namespace nous::llm
