#pragma once
// One call under an observer (nous_llm internal): the fields every event of
// it carries, its clock, and what it counts (content events, the first
// one's time). run_chat and the Router report through it; a call with no
// observer has none, and its token loop is the one without any of this.
// docs/telemetry.md.

#include <chrono>
#include <optional>
#include <string>

#include "nous/llm/embed.hpp"
#include "nous/llm/request.hpp"
#include "nous/llm/result.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm::detail {

/// Whether a delta is content the caller sees (text, reasoning, a tool
/// call, a refusal): what a first content event is, and what a router must
/// never fail over after.
inline bool is_content(const Delta& d) noexcept {
    return !d.text.empty() || !d.reasoning.empty() || !d.reasoning_redacted.empty() ||
           !d.tool_calls.empty() || !d.refusal.empty();
}

class CallObservation {
  public:
    using Clock = std::chrono::steady_clock;

    /// `operation`: gen_ai.operation.name, a literal ("chat", "embeddings").
    explicit CallObservation(Observer& observer, std::string_view operation = "chat");
    /// A call that started and never finished (the caller's callback threw
    /// through it) is told as an error, error.type "exception": an
    /// observer that keeps something per call (a span) is never left with it.
    ~CallObservation();
    CallObservation(const CallObservation&) = delete;
    CallObservation& operator=(const CallObservation&) = delete;

    /// The provider, model and server of `request` (an attempt's, through a
    /// router), and the deployment ("" without a router). `request` is
    /// handed to the start and attempt events that follow, and must live
    /// until they are told.
    void set_target(const ChatRequest& request, std::string_view deployment = "");
    /// An embeddings call's provider, model and base URL.
    void set_target(Provider provider, std::string_view model, std::string_view base_url);
    /// The application's traceparent, told with the start event.
    void set_trace_parent(std::string_view traceparent) { trace_parent_ = traceparent; }
    void emit(CallEvent::Kind kind);
    void failover(std::string_view reason);

    /// The response head: once.
    void response_head() {
        if (!head_seen_) {
            head_seen_ = true;
            emit(CallEvent::Kind::response_head);
        }
    }
    /// A content event: counted; the first one timed and told.
    void content() {
        if (chunks_++ == 0) {
            first_content_ = Clock::now() - start_;
            emit(CallEvent::Kind::first_content);
        }
    }
    /// An attempt begins: what the last one counted is dropped.
    void new_attempt() {
        head_seen_ = false;
        chunks_ = 0;
        first_content_.reset();
    }
    /// The call's end or error event.
    void finish(const Result<ChatResult>& result);
    void finish(const Result<Embeddings>& result);

  private:
    CallEvent base() const;
    void fail(const Error& error);
    void set_server(const std::string& base_url);
    Observer& observer_;
    const std::string_view operation_;
    const std::uint64_t call_id_;
    const Clock::time_point start_;
    const ChatRequest* request_ = nullptr;
    std::string trace_parent_;
    std::string provider_, model_, server_, deployment_;
    std::int64_t port_ = 0;
    bool streamed_ = false, head_seen_ = false;
    bool started_ = false, finished_ = false;
    std::int64_t chunks_ = 0;
    std::optional<std::chrono::nanoseconds> first_content_;
};

/// The observer a call reports to: its own, else `fallback` (a router's),
/// else the application's default; nullptr: none. No lock is taken.
Observer* observer_of(const ChatRequest& request, Observer* fallback = nullptr) noexcept;
Observer* observer_of(const EmbedRequest& request) noexcept;

/// run_chat's work, reporting the response head and the first content event
/// to `observation` as they happen and counting content events (nullptr:
/// none of that); the start and the end are the caller's to report.
Result<ChatResult> run_chat_observed(const ChatRequest& request, const nous::http::Options& options,
                                     const std::function<bool(const Delta&)>& on_delta,
                                     CallObservation* observation);

}  // namespace nous::llm::detail
