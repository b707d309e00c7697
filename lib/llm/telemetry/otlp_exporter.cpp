// The OTLP exporter (nous/llm/otlp.hpp): spans assembled from a call's
// events, a bounded queue the calls never wait on, and one thread that
// sends batches and the metrics, retrying what OTLP says to retry.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "nous/http/client.hpp"
#include "nous/http/log.hpp"
#include "nous/llm/otlp.hpp"
#include "telemetry/otlp_answer.hpp"
#include "telemetry/otlp_content.hpp"
#include "telemetry/otlp_json.hpp"
#include "telemetry/trace_ids.hpp"

namespace nous::llm {

namespace {

using Clock = std::chrono::steady_clock;
using detail::SpanRecord;

/// The queue's bound and the batch: the specification's batch span
/// processor defaults (2048 spans, 512 a request, 5 s between sends).
constexpr std::size_t kMaxQueue = 2048;
constexpr std::size_t kBatch = 512;
constexpr auto kScheduleDelay = std::chrono::seconds(5);
/// Backoff between attempts of one export when the collector gives no
/// Retry-After: 100 ms doubling, capped at 5 s, all within the timeout.
constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);

std::uint64_t unix_nano_now() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

/// OTLP/HTTP's retryable answers: 429, 502, 503, 504, and a collector that
/// could not be reached (the specification's "retryable" responses).
bool retryable(const nous::http::Error& e) {
    using nous::http::ErrorCode;
    switch (e.code) {
        case ErrorCode::connect_failed:
        case ErrorCode::timeout_connect:
        case ErrorCode::connection_closed:
            return true;
        case ErrorCode::http_status:
            return e.status == 429 || e.status == 502 || e.status == 503 || e.status == 504;
        default:
            return false;
    }
}

}  // namespace

struct OtlpExporter::Impl {
    OtlpSettings settings;
    detail::OtlpSource source;
    std::uint64_t start_unix_nano = unix_nano_now();
    detail::MetricShards metrics;

    /// Calls in progress, by call id: sixteen shards, so that calls on
    /// different threads seldom take the same lock.
    struct OpenCall {
        SpanRecord span;
        std::optional<SpanRecord> attempt;  ///< a router's attempt in progress
    };
    struct alignas(64) CallShard {
        std::mutex mutex;
        std::unordered_map<std::uint64_t, OpenCall> calls;
    };
    std::array<CallShard, 16> open;

    /// Finished spans waiting for the thread, in 16 shards dealt out by
    /// calling thread (no lock that every call takes: 64 threads on two
    /// cores must not queue behind one preempted holder), bounded together
    /// by `queued`.
    struct alignas(64) SpanShard {
        std::mutex mutex;
        std::vector<SpanRecord> spans;
    };
    std::array<SpanShard, 16> pending;
    std::atomic<std::size_t> queued{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<bool> stopped{false};  ///< the thread is gone: spans are dropped

    mutable std::mutex mutex;
    std::condition_variable wake;      ///< the thread: a full batch, a flush, the end
    std::condition_variable finished;  ///< flush(): its request served
    bool stopping = false;
    std::uint64_t flushes_asked = 0, flushes_done = 0;
    bool last_flush_ok = true;
    Stats stats;
    std::thread thread;

    void on_event(const CallEvent& e);
    void enqueue(SpanRecord&& span);
    /// Every pending span, taken out of the shards.
    std::vector<SpanRecord> take_pending();
    void run();
    /// One export request, retried as OTLP says until `deadline`; the error
    /// when it failed, else the collector's answer in `answer`.
    std::optional<std::string> send(const std::string& url, const std::string& body,
                                    Clock::time_point deadline, std::string& answer);
    bool export_spans(std::vector<SpanRecord>& spans, Clock::time_point deadline);
    bool export_metrics(Clock::time_point deadline);
};

void OtlpExporter::Impl::on_event(const CallEvent& e) {
    metrics.record(e);
    if (settings.traces_endpoint.empty()) return;
    using Kind = CallEvent::Kind;
    // Only the events that open, close or mark a span take the shard's lock.
    if (e.kind == Kind::response_head) return;
    const std::uint64_t now = unix_nano_now();
    CallShard& shard = open[e.call_id % open.size()];
    if (e.kind == Kind::start) {
        OpenCall call;
        SpanRecord& s = call.span;
        bool sampled = true;
        if (detail::parse_traceparent(e.trace_parent, s.trace_id, s.parent_span_id, sampled)) {
            if (!sampled) return;  // the parent's sampling decision holds: no span
            s.remote_parent = true;
        } else {
            s.trace_id = detail::random_trace_id();
        }
        s.span_id = detail::random_span_id();
        s.facts = detail::CallFacts::of(e);
        s.start_unix_nano = now - static_cast<std::uint64_t>(e.elapsed.count());
        if (settings.capture_content && e.request)
            s.input_messages = detail::input_messages_json(*e.request);
        std::lock_guard lock(shard.mutex);
        shard.calls.insert_or_assign(e.call_id, std::move(call));
        return;
    }
    std::unique_lock lock(shard.mutex);
    auto it = shard.calls.find(e.call_id);
    if (it == shard.calls.end()) return;  // started before this exporter was set
    OpenCall& call = it->second;
    switch (e.kind) {
        case Kind::attempt: {
            SpanRecord a;
            a.trace_id = call.span.trace_id;
            a.parent_span_id = call.span.span_id;
            a.start_unix_nano = now;
            call.attempt = std::move(a);
            lock.unlock();  // the call's own thread is the only one to touch its spans
            call.attempt->span_id = detail::random_span_id();
            call.attempt->facts = detail::CallFacts::of(e);
            return;
        }
        case Kind::failover: {
            if (!call.attempt) return;
            SpanRecord done = std::move(*call.attempt);
            call.attempt.reset();
            lock.unlock();
            done.end_unix_nano = now;
            done.error = true;
            done.status_message = std::string(e.reason);
            done.facts.failover_reason = e.reason;
            enqueue(std::move(done));
            return;
        }
        case Kind::first_content:
            call.span.first_chunk_unix_nano = now;
            if (call.attempt) call.attempt->first_chunk_unix_nano = now;
            return;
        case Kind::end:
        case Kind::error: {
            SpanRecord span = std::move(call.span);
            std::optional<SpanRecord> attempt = std::move(call.attempt);
            shard.calls.erase(it);
            lock.unlock();
            span.end_unix_nano = now;
            // The end's facts are the call's: through a router, the
            // deployment that answered and its model.
            span.facts = detail::CallFacts::of(e);
            if (settings.capture_content && e.result)
                span.output_messages = detail::output_messages_json(*e.result);
            if (e.kind == Kind::error) {
                span.error = true;
                span.status_message = e.error ? e.error->message : std::string(e.error_type);
            } else if (!e.error_type.empty()) {
                span.error = true;
                span.status_message = "the provider ended the stream with an error event";
            }
            if (attempt) {
                attempt->end_unix_nano = now;
                attempt->facts.take_end(e);
                attempt->error = span.error;
                attempt->status_message = span.status_message;
                enqueue(std::move(*attempt));
            }
            enqueue(std::move(span));
            return;
        }
        default:
            return;
    }
}

void OtlpExporter::Impl::enqueue(SpanRecord&& span) {
    if (stopped.load(std::memory_order_acquire)) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const std::size_t before = queued.fetch_add(1, std::memory_order_acq_rel);
    if (before >= kMaxQueue) {  // full: drop, count, go on
        queued.fetch_sub(1, std::memory_order_acq_rel);
        dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    static std::atomic<std::size_t> next_shard{0};
    thread_local const std::size_t shard_index =
        next_shard.fetch_add(1, std::memory_order_relaxed) % 16;
    {
        SpanShard& shard = pending[shard_index];
        std::lock_guard lock(shard.mutex);
        shard.spans.push_back(std::move(span));
    }
    if (before + 1 == kBatch) {  // a full batch: wake the thread (under its lock: no lost wake-up)
        std::lock_guard lock(mutex);
        wake.notify_one();
    }
}

std::vector<SpanRecord> OtlpExporter::Impl::take_pending() {
    std::vector<SpanRecord> out;
    out.reserve(queued.load(std::memory_order_acquire));
    for (SpanShard& shard : pending) {
        std::lock_guard lock(shard.mutex);
        for (auto& span : shard.spans) out.push_back(std::move(span));
        shard.spans.clear();
    }
    queued.fetch_sub(out.size(), std::memory_order_acq_rel);
    return out;
}

std::optional<std::string> OtlpExporter::Impl::send(const std::string& url, const std::string& body,
                                                    Clock::time_point deadline,
                                                    std::string& answer) {
    nous::http::Headers headers = settings.headers;
    headers.emplace_back("Content-Type", "application/json");
    auto backoff = kFirstBackoff;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return "no answer within the export timeout";
        nous::http::Options options = settings.http;
        options.max_retries = 0;  // OTLP's own rules below
        options.total_timeout = left;
        options.idempotency_key = false;
        auto response = nous::http::post(url, body, headers, options);
        if (response) {
            answer = std::move(response->body);
            return std::nullopt;
        }
        const nous::http::Error& e = response.error();
        std::string why = std::string(nous::http::to_string(e.code)) + ": " + e.message;
        if (!retryable(e)) return why;
        const auto delay = e.retry_after ? *e.retry_after : backoff;
        backoff = std::min(backoff * 2, kMaxBackoff);
        if (Clock::now() + delay >= deadline) return why + " (no time left to retry)";
        std::this_thread::sleep_for(delay);
    }
}

bool OtlpExporter::Impl::export_spans(std::vector<SpanRecord>& spans, Clock::time_point deadline) {
    bool ok = true;
    for (std::size_t first = 0; first < spans.size(); first += kBatch) {
        const std::size_t n = std::min(kBatch, spans.size() - first);
        std::string answer;
        auto failed = send(settings.traces_endpoint,
                           detail::traces_request_json(
                               source, std::span<const SpanRecord>(spans).subspan(first, n)),
                           deadline, answer);
        // A 200 may still reject part of the batch (OTLP's partial success):
        // those spans are not exported, and are never sent again.
        const auto rejection =
            failed ? detail::OtlpRejection{}
                   : detail::rejection_of(answer, "rejectedSpans", "rejected_spans");
        const std::uint64_t rejected =
            std::min<std::uint64_t>(static_cast<std::uint64_t>(rejection.rejected), n);
        std::lock_guard lock(mutex);
        if (failed) {
            stats.spans_failed += n;
            stats.last_error = "traces: " + *failed;
            ok = false;
        } else {
            stats.spans_exported += n - rejected;
            if (rejected > 0) {
                stats.spans_failed += rejected;
                stats.last_error = "traces: the collector rejected " + std::to_string(rejected) +
                                   " of " + std::to_string(n) + " spans" +
                                   (rejection.why.empty() ? "" : ": " + rejection.why);
                ok = false;
            }
        }
    }
    spans.clear();
    return ok;
}

bool OtlpExporter::Impl::export_metrics(Clock::time_point deadline) {
    if (settings.metrics_endpoint.empty()) return true;
    const std::string body =
        detail::metrics_request_json(source, metrics.merged(), start_unix_nano, unix_nano_now());
    if (body.empty()) return true;
    std::string answer;
    auto failed = send(settings.metrics_endpoint, body, deadline, answer);
    const auto rejection =
        failed ? detail::OtlpRejection{}
               : detail::rejection_of(answer, "rejectedDataPoints", "rejected_data_points");
    std::lock_guard lock(mutex);
    if (failed) {
        ++stats.metric_exports_failed;
        stats.last_error = "metrics: " + *failed;
        return false;
    }
    if (rejection.rejected > 0) {
        ++stats.metric_exports_failed;
        stats.last_error = "metrics: the collector rejected " + std::to_string(rejection.rejected) +
                           " data points" + (rejection.why.empty() ? "" : ": " + rejection.why);
        return false;
    }
    ++stats.metric_exports;
    return true;
}

void OtlpExporter::Impl::run() {
    std::unique_lock lock(mutex);
    auto next_spans = Clock::now() + kScheduleDelay;
    auto next_metrics = Clock::now() + settings.metric_export_interval;
    for (;;) {
        wake.wait_until(lock, std::min(next_spans, next_metrics), [&] {
            return stopping || queued.load() >= kBatch || flushes_asked > flushes_done;
        });
        const bool ending = stopping;
        const std::uint64_t flush_target = flushes_asked;
        const bool flushing = ending || flush_target > flushes_done;
        const auto now = Clock::now();
        const bool spans_due = flushing || queued.load() >= kBatch || now >= next_spans;
        const bool metrics_due = flushing || now >= next_metrics;
        lock.unlock();
        std::vector<SpanRecord> spans;
        if (spans_due) spans = take_pending();
        // A flush's whole work is bounded by one timeout; a scheduled
        // export's requests each by theirs.
        const auto deadline = now + settings.timeout;
        bool ok = true;
        if (!spans.empty()) ok = export_spans(spans, deadline) && ok;
        if (metrics_due) ok = export_metrics(deadline) && ok;
        lock.lock();
        if (!ok)  // said, not hidden: the calls themselves are not touched
            nous::http::log_message(nous::http::LogLevel::warning,
                                    "OTLP export failed: " + stats.last_error);
        if (spans_due) next_spans = Clock::now() + kScheduleDelay;
        if (metrics_due) next_metrics = Clock::now() + settings.metric_export_interval;
        if (flushing) {
            flushes_done = std::max(flushes_done, flush_target);
            last_flush_ok = ok;
            finished.notify_all();
        }
        if (ending) {
            stopped.store(true, std::memory_order_release);
            finished.notify_all();
            lock.unlock();
            // Spans that arrived during the last export: dropped, counted.
            dropped.fetch_add(take_pending().size(), std::memory_order_relaxed);
            return;
        }
    }
}

OtlpExporter::OtlpExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

nous::http::Result<std::shared_ptr<OtlpExporter>> OtlpExporter::start(OtlpSettings settings) {
    for (const std::string* url : {&settings.traces_endpoint, &settings.metrics_endpoint})
        if (!url->empty())
            if (auto bad = nous::http::validate_url(*url))
                return nous::http::Error(nous::http::ErrorCode::invalid_argument,
                                         "OTLP endpoint: " + bad->message);
    if (settings.timeout.count() <= 0)
        return nous::http::Error(nous::http::ErrorCode::invalid_argument,
                                 "OTLP timeout must be positive");
    if (settings.metric_export_interval.count() <= 0)
        return nous::http::Error(nous::http::ErrorCode::invalid_argument,
                                 "OTLP metric export interval must be positive");
    auto impl = std::make_unique<Impl>();
    impl->source.resource.emplace_back("service.name", settings.service_name);
    for (const auto& [name, value] : settings.resource)
        if (name != "service.name") impl->source.resource.emplace_back(name, value);
    impl->source.resource.emplace_back("telemetry.sdk.name", std::string("nous-http"));
    impl->source.resource.emplace_back("telemetry.sdk.language", std::string("cpp"));
    impl->source.resource.emplace_back("telemetry.sdk.version", std::string(NOUS_VERSION));
    impl->source.scope_version = NOUS_VERSION;
    impl->settings = std::move(settings);
    Impl* raw = impl.get();
    try {
        impl->thread = std::thread([raw] { raw->run(); });
    } catch (const std::system_error& e) {
        return nous::http::Error(nous::http::ErrorCode::saturated,
                                 std::string("no thread for the OTLP exporter: ") + e.what());
    }
    return std::shared_ptr<OtlpExporter>(new OtlpExporter(std::move(impl)));
}

OtlpExporter::~OtlpExporter() { shutdown(); }

void OtlpExporter::on_event(const CallEvent& event) noexcept {
    try {
        impl_->on_event(event);
    } catch (...) {
        // Out of memory for a span: it is lost, the call is not hurt.
    }
}

bool OtlpExporter::flush() {
    std::unique_lock lock(impl_->mutex);
    if (impl_->stopped.load()) return false;
    const std::uint64_t target = ++impl_->flushes_asked;
    impl_->wake.notify_one();
    impl_->finished.wait(lock, [&] { return impl_->flushes_done >= target || impl_->stopped; });
    return impl_->flushes_done >= target && impl_->last_flush_ok;
}

bool OtlpExporter::shutdown() {
    {
        std::lock_guard lock(impl_->mutex);
        if (!impl_->thread.joinable()) return impl_->last_flush_ok;
        impl_->stopping = true;
        impl_->wake.notify_one();
    }
    impl_->thread.join();
    // A span queued while the thread made its last round: dropped, counted.
    impl_->dropped.fetch_add(impl_->take_pending().size(), std::memory_order_relaxed);
    std::lock_guard lock(impl_->mutex);
    return impl_->last_flush_ok;
}

OtlpExporter::Stats OtlpExporter::stats() const {
    std::lock_guard lock(impl_->mutex);
    Stats out = impl_->stats;
    out.spans_dropped = impl_->dropped.load(std::memory_order_relaxed);
    return out;
}

}  // namespace nous::llm
