#pragma once
// What a chat call tells an Observer of its life: start, each attempt and
// failover (through a Router), the response head, the first content event,
// and its end or its error, with the OpenTelemetry GenAI semantic
// conventions' attribute names. Nothing is reported per token. Library
// nous_llm; docs/telemetry.md (an adapter to opentelemetry-cpp is a few lines).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "nous/llm/provider.hpp"

namespace nous::llm {

struct ChatRequest;
struct ChatResult;
struct Embeddings;
struct Usage;

using AttributeValue = std::variant<std::string, std::int64_t, double, std::vector<std::string>>;
/// (name, value) pairs under the conventions' names (`gen_ai.request.model`...).
using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

/// One moment of a call. Views and pointers are valid during on_event only.
struct CallEvent {
    enum class Kind {
        start,          ///< the call begins (once, however many attempts follow)
        attempt,        ///< a Router sends it to `deployment`
        failover,       ///< that attempt failed before any content: `reason`; the next follows
        response_head,  ///< the response's head arrived (a stream's: with its first item)
        first_content,  ///< the first content event (text, reasoning, a tool call, a refusal)
        end,            ///< the call's answer: `result`
        error,          ///< the call's failure: `error`, `error_type` ("exception", with no
                        ///< `error`, when the caller's callback threw through the call)
    };
    Kind kind = Kind::start;
    /// The same for every event of one call and unique in the process: an
    /// observer that keeps something per call (a span) keys it by this.
    std::uint64_t call_id = 0;
    std::string_view operation = "chat";  ///< gen_ai.operation.name: "chat", "embeddings"

    /// gen_ai.provider.name: "openai" (both OpenAI formats), "anthropic", "gcp.gemini".
    std::string_view provider;
    std::string_view request_model;   ///< gen_ai.request.model
    std::string_view server_address;  ///< server.address: the base URL's host
    std::int64_t server_port = 0;     ///< server.port
    bool streamed = false;
    std::string_view deployment;  ///< the Router's deployment ("" without one)
    /// Since `start`.
    std::chrono::nanoseconds elapsed{0};

    // failover
    std::string_view reason;
    // start
    /// The request's trace_parent (W3C traceparent), "" when none.
    std::string_view trace_parent;
    // start, attempt
    /// A chat call's request as it goes out (an attempt's, through a
    /// router); nullptr for embeddings.
    const ChatRequest* request = nullptr;
    // end
    const ChatResult* result = nullptr;      ///< a chat call's answer
    const Embeddings* embeddings = nullptr;  ///< an embeddings call's
    /// The tokens the call used: a chat answer's usage, or an embeddings
    /// call's summed over its requests; nullptr when the provider gave none.
    const Usage* usage = nullptr;
    /// A streamed call's content events, and the time to the first of them
    /// (gen_ai.client.operation.time_to_first_chunk).
    std::int64_t chunks = 0;
    std::optional<std::chrono::nanoseconds> time_to_first_chunk;
    /// The mean gap between content events after the first: (end - first) /
    /// (chunks - 1), measured once at the end (no clock read per token).
    std::optional<std::chrono::nanoseconds> time_per_output_chunk;
    // error
    const Error* error = nullptr;
    /// error.type: the HTTP status ("429") for an error status, else the
    /// error code's name ("timeout_read"); "stream_error" for the provider's
    /// error event inside a stream (an `end` that carries one says it too).
    std::string_view error_type;

    /// The event's attributes under the conventions' names: gen_ai.operation.name,
    /// gen_ai.provider.name, gen_ai.request.model, server.address, server.port;
    /// at the end gen_ai.response.id, gen_ai.response.finish_reasons,
    /// gen_ai.usage.input_tokens, gen_ai.usage.output_tokens,
    /// gen_ai.usage.cache_read.input_tokens and cache_creation.input_tokens
    /// (when the provider counted them), nous.usage.reasoning_tokens;
    /// gen_ai.embeddings.dimension.count; on an error error.type; and
    /// nous.deployment, nous.failover.reason where they apply.
    Attributes attributes() const;
};

/// Hears every call it is set on. on_event is called on the call's thread,
/// in order; it must be thread-safe when one observer serves several threads.
class Observer {
  public:
    virtual ~Observer() = default;
    virtual void on_event(const CallEvent& event) noexcept = 0;
};

/// The observer of every call that names none (ChatRequest::observer) and
/// runs through no router with one: the application's. nullptr: none.
void set_default_observer(std::shared_ptr<Observer> observer);
std::shared_ptr<Observer> default_observer();

/// One observer that tells each of `observers` in turn, in order (a null
/// one is left out): the built-in Metrics and an OtlpExporter together.
std::shared_ptr<Observer> observe_all(std::vector<std::shared_ptr<Observer>> observers);

/// gen_ai.provider.name of a provider: "openai", "anthropic", "gcp.gemini".
std::string_view otel_provider_name(Provider provider) noexcept;

}  // namespace nous::llm
