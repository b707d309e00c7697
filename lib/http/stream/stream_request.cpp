// Opening a streamed response through the call pipeline, and the stream cap.

#include "stream/stream_request.hpp"

#include <atomic>

#include "codec/answer_head_check.hpp"
#include "codec/retry_hint.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/retry.hpp"

namespace nous::http {

namespace {
std::atomic<std::size_t> g_live_streams{0};
}  // namespace

std::size_t live_streams() noexcept { return g_live_streams.load(); }

namespace detail {

bool StreamSlot::acquire(std::size_t cap) noexcept {
    if (g_live_streams.fetch_add(1) >= cap) {
        g_live_streams.fetch_sub(1);
        return false;
    }
    held_ = true;
    return true;
}

StreamSlot::~StreamSlot() {
    if (held_) g_live_streams.fetch_sub(1);
}

namespace {

/// NOUS_HTTP_WINDOW_RELAY: "off" runs the window reader-only; another
/// value but "on" is said once and ignored.
bool window_relay_wanted(const char* value) {
    if (value == nullptr || std::string_view(value) == "on") return true;
    if (std::string_view(value) == "off") return false;
    static std::atomic<bool> told{false};
    if (!told.exchange(true))
        log(LogLevel::warning,
            std::string("NOUS_HTTP_WINDOW_RELAY=") + value + " ignored: it takes on or off");
    return true;
}

}  // namespace

Result<std::unique_ptr<StreamCall>> make_stream_call(std::string_view url, std::string_view body,
                                                     const Headers& headers, const Options& options,
                                                     const EnvSnapshot& env, const Config& config) {
    auto call = std::make_unique<StreamCall>();
    call->options = options;
    // The stream's own token does the interrupting; the caller's token
    // reaches it through the handle (Stream::State::interrupt).
    call->options.cancel = nullptr;
    // Prepared in place: a PreparedCall returned by value was a second
    // copy in this frame, under which the rest of the stream's setup ran.
    {
        auto parsed = validate_call(url, body, headers);
        if (!parsed) return parsed.error();
        if (auto e = prepare_call_into(call->prepared, std::move(parsed.value()), headers,
                                       call->options, env, config))
            return *e;
    }
    call->body.assign(body);
    call->headers = headers;
    call->window_relay = window_relay_wanted(env.http_window_relay);
    bool has_type = false, has_accept = false;
    for (const auto& [k, v] : headers) {
        has_type |= header_name_equals(k, "content-type");
        has_accept |= header_name_equals(k, "accept");
    }
    if (!has_type) call->headers.emplace_back("content-type", "application/json");
    if (!has_accept) call->headers.emplace_back("accept", "text/event-stream");
    const Settings& settings = call->prepared.settings;
    if (settings.window_low_bytes > settings.window_high_bytes)
        return Error(ErrorCode::invalid_argument,
                     "window_low_bytes must not exceed window_high_bytes");
    return call;
}

StreamRequest::StreamRequest(StreamCall& call, const CancelToken& token, StreamReadBuffer& buffer)
    : call_(call), token_(token), buffer_(buffer) {}

StreamRequest::~StreamRequest() = default;

void StreamRequest::release() {
    if (attempt_) attempt_->release();
}

std::optional<Error> StreamRequest::unreadable_answer(const Headers& answer,
                                                      const Headers& request) const {
    if (auto e = unasked_content_coding(answer, request)) return e;
    // Only SSE is checked: an NDJSON or JSON-array stream may well be
    // labelled application/json, and a custom decoder knows its own format.
    if (!call_.options.decoder && call_.options.stream_format == StreamFormat::sse)
        return whole_json_for_stream(answer);
    return std::nullopt;
}

std::optional<Error> StreamRequest::open() {
    RetryRun run;
    run.max_retries = call_.prepared.settings.max_retries;
    run.total_timeout = call_.options.total_timeout;
    run.hooks = call_.options.test_hooks;
    run.cancel = &token_;
    run.what = "stream";
    auto error = run_with_retries(
        [&](Clock::time_point total_by) -> std::optional<Error> {
            attempt_.emplace(call_.prepared, &token_, buffer_.bytes, sizeof buffer_.bytes,
                             limits::read_buffer_bytes);
            Headers attempt_headers;
            const Headers* headers = &call_.headers;
            if (call_.options.before_each_attempt) {
                attempt_headers = call_.headers;
                const Url& url = call_.prepared.url;
                call_.options.before_each_attempt(
                    "POST", url.scheme() + "://" + url.host_header() + url.target, call_.body,
                    attempt_headers);
                headers = &attempt_headers;
            }
            auto e = attempt_->open(deadlines_for(call_.prepared.settings, total_by), call_.body,
                                    *headers);
            if (!e) {
                ResponseHead& head = attempt_->reader().head();
                status_ = head.status;
                std::optional<Error> unreadable;
                if (status_ / 100 == 2) {
                    if (call_.options.refuse_unreadable_answers)
                        unreadable = unreadable_answer(head.headers, *headers);
                    if (!unreadable) return std::nullopt;
                }
                // Non-2xx, or an answer that is not the stream: the body
                // (capped) goes into the error.
                std::string body;
                e = attempt_->reader().read_whole_body(body,
                                                       attempt_->params().max_error_body_bytes);
                if (!e && unreadable)
                    e = with_answer(std::move(*unreadable), head.status, std::move(head.headers),
                                    std::move(body));
                else if (!e)
                    e = http_status_error(head, std::move(body));
            }
            attempt_->release();
            if (is_cancelled(&token_)) return Error(ErrorCode::cancelled, "stream cancelled");
            return e;
        },
        run);
    if (error && is_cancelled(&token_)) return Error(ErrorCode::cancelled, "stream cancelled");
    if (!error) call_.drop_request();
    return error;
}

void StreamRequest::drain_and_release(Milliseconds budget) {
    if (!attempt_ || !attempt_->active()) return;
    ExchangeParams& params = attempt_->params();
    params.deadlines.idle = budget;
    params.deadlines.total_by =
        std::min(params.deadlines.total_by, saturating_add(Clock::now(), budget));
    for (;;) {
        std::string_view ignored;
        auto piece = attempt_->reader().read_body_view(ignored);
        if (piece != ResponseReader::Piece::data) break;  // end (reusable) or error (closed below)
    }
    release();
}

ResponseReader::Piece StreamRequest::read(std::string& out, std::optional<Error>& error) {
    return attempt_->reader().read_body_piece(out, error);
}

}  // namespace detail
}  // namespace nous::http
