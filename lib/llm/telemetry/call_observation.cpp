// One call under an observer (call_observation.hpp).

#include "telemetry/call_observation.hpp"

#include <atomic>
#include <charconv>
#include <mutex>
#include <vector>

#include "formats/wire_format.hpp"

namespace nous::llm {

namespace {

/// The default observer, read without a lock on every call: a plain atomic
/// pointer. Every observer ever set stays alive until exit, so that a call
/// that read the pointer just before a replacement never holds a dangling one.
std::atomic<Observer*> g_default{nullptr};
std::mutex g_default_mutex;
std::vector<std::shared_ptr<Observer>>& kept_alive() {
    static std::vector<std::shared_ptr<Observer>> all;
    return all;
}

}  // namespace

void set_default_observer(std::shared_ptr<Observer> observer) {
    std::lock_guard lock(g_default_mutex);
    g_default.store(observer.get(), std::memory_order_release);
    if (observer) kept_alive().push_back(std::move(observer));
}

std::shared_ptr<Observer> default_observer() {
    std::lock_guard lock(g_default_mutex);
    Observer* current = g_default.load(std::memory_order_acquire);
    for (const auto& o : kept_alive())
        if (o.get() == current) return o;
    return nullptr;
}

namespace detail {

Observer* observer_of(const ChatRequest& request, Observer* fallback) noexcept {
    if (request.observer) return request.observer.get();
    if (fallback) return fallback;
    return g_default.load(std::memory_order_acquire);
}

namespace {
std::atomic<std::uint64_t> g_next_call_id{1};
}  // namespace

CallObservation::CallObservation(Observer& observer, std::string_view operation)
    : observer_(observer),
      operation_(operation),
      call_id_(g_next_call_id.fetch_add(1, std::memory_order_relaxed)),
      start_(Clock::now()) {}

Observer* observer_of(const EmbedRequest& request) noexcept {
    if (request.observer) return request.observer.get();
    return g_default.load(std::memory_order_acquire);
}

CallObservation::~CallObservation() {
    if (!started_ || finished_) return;
    CallEvent e = base();
    e.kind = CallEvent::Kind::error;
    e.error_type = "exception";
    observer_.on_event(e);
}

void CallObservation::set_target(const ChatRequest& request, std::string_view deployment) {
    provider_ = std::string(otel_provider_name(request.provider));
    model_ = request.model;
    deployment_ = std::string(deployment);
    streamed_ = request.stream;
    request_ = &request;
    trace_parent_ = request.trace_parent;
    set_server(base_url_of(wire_format(request.provider), request.base_url));
}

void CallObservation::set_target(Provider provider, std::string_view model,
                                 std::string_view base_url) {
    provider_ = std::string(otel_provider_name(provider));
    model_ = std::string(model);
    set_server(base_url_of(wire_format(provider), std::string(base_url)));
}

/// server.address and server.port: the base URL's authority.
void CallObservation::set_server(const std::string& base) {
    const auto scheme_end = base.find("://");
    const bool tls = base.rfind("https", 0) == 0;
    std::string authority = base.substr(scheme_end == std::string::npos ? 0 : scheme_end + 3);
    authority = authority.substr(0, authority.find('/'));
    if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
    port_ = tls ? 443 : 80;
    const auto colon = authority.rfind(':');
    if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
        std::from_chars(authority.data() + colon + 1, authority.data() + authority.size(), port_);
        authority.resize(colon);
    }
    server_ = authority;
}

CallEvent CallObservation::base() const {
    CallEvent e;
    e.call_id = call_id_;
    e.operation = operation_;
    e.provider = provider_;
    e.request_model = model_;
    e.server_address = server_;
    e.server_port = port_;
    e.streamed = streamed_;
    e.deployment = deployment_;
    e.elapsed = Clock::now() - start_;
    return e;
}

void CallObservation::emit(CallEvent::Kind kind) {
    CallEvent e = base();
    e.kind = kind;
    if (kind == CallEvent::Kind::start) {
        started_ = true;
        e.trace_parent = trace_parent_;
    }
    if (kind == CallEvent::Kind::start || kind == CallEvent::Kind::attempt) e.request = request_;
    observer_.on_event(e);
}

void CallObservation::failover(std::string_view reason) {
    CallEvent e = base();
    e.kind = CallEvent::Kind::failover;
    e.reason = reason;
    observer_.on_event(e);
}

void CallObservation::fail(const Error& error) {
    finished_ = true;
    CallEvent e = base();
    e.kind = CallEvent::Kind::error;
    e.error = &error;
    const std::string status = std::to_string(error.status);
    e.error_type = error.code == nous::http::ErrorCode::http_status
                       ? std::string_view(status)
                       : nous::http::to_string(error.code);
    observer_.on_event(e);
}

void CallObservation::finish(const Result<ChatResult>& result) {
    if (!result) return fail(result.error());
    finished_ = true;
    CallEvent e = base();
    e.kind = CallEvent::Kind::end;
    e.result = &result.value();
    if (result->usage) e.usage = &*result->usage;
    if (result->stream_error) e.error_type = "stream_error";
    if (streamed_) {
        e.chunks = chunks_;
        e.time_to_first_chunk = first_content_;
        if (first_content_ && chunks_ >= 2)
            e.time_per_output_chunk = (e.elapsed - *first_content_) / (chunks_ - 1);
    }
    observer_.on_event(e);
}

void CallObservation::finish(const Result<Embeddings>& result) {
    if (!result) return fail(result.error());
    finished_ = true;
    CallEvent e = base();
    e.kind = CallEvent::Kind::end;
    e.embeddings = &result.value();
    if (result->usage) e.usage = &*result->usage;
    observer_.on_event(e);
}

}  // namespace detail
}  // namespace nous::llm
