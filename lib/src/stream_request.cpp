#include "stream_request.hpp"

#include <atomic>

#include "backends.hpp"
#include "cancel.hpp"
#include "retry.hpp"

namespace nous::http {

namespace {
std::atomic<std::size_t> g_live_streams{0};
constexpr std::size_t kReadBuffer = 64 * 1024;
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

StreamRequest::StreamRequest(const StreamCall& call, const CancelToken& token)
    : call_(call), token_(token), buffer_(new char[kReadBuffer]) {
    params_.cancel = &token_;
    params_.max_response_bytes = SIZE_MAX;  // a stream's size is bounded by the window, not a cap
    params_.max_error_body_bytes = defaults::max_error_body_bytes;
    if (!call.proxy.empty() && !call.url.https) {
        auto proxy_url = parse_url(call.proxy);
        if (proxy_url && !proxy_url->userinfo.empty()) params_.proxy_authorization = basic_auth(proxy_url->userinfo);
    }
}

StreamRequest::~StreamRequest() {
    reader_.reset();
    registration_.reset();
    if (connection_ && pool_) pool_->checkin(std::move(connection_), false);
}

void StreamRequest::release() {
    if (!connection_) return;
    bool reusable = reader_ && reader_->reusable();
    reader_.reset();
    registration_.reset();
    pool_->checkin(std::move(connection_), reusable);
}

std::optional<Error> StreamRequest::open() {
    pool_ = pool_for(call_.url, call_.proxy, call_.options, call_.settings.pool);
    const RetryHooks* hooks = call_.options.retry_hooks;
    for (int attempt = 0, resends = 0;;) {
        params_.deadlines.connect_by = Clock::now() + call_.settings.connect_timeout;
        params_.deadlines.total_by = call_.total_by;
        params_.deadlines.idle = call_.settings.read_timeout;
        // Streams take a warm connection when one is free: no handshake per call.
        auto lease = pool_->checkout(params_.deadlines, &token_, resends == 0);
        std::optional<Error> error;
        if (!lease) {
            error = lease.error();
        } else {
            connection_ = std::move(lease->connection);
            registration_ = std::make_unique<FdRegistration>(&token_, connection_->fd());
            reader_ = std::make_unique<ResponseReader>(*connection_, params_, buffer_.get(), kReadBuffer);
            error = reader_->send(call_.url, call_.body, call_.headers);
            if (!error) error = reader_->read_head();
            if (!error) {
                status_ = reader_->head().status;
                if (status_ / 100 == 2) return std::nullopt;
                // Non-2xx: the body (capped) goes into the error.
                std::string body;
                error = reader_->read_whole_body(body, params_.max_error_body_bytes);
                if (!error) error = http_status_error(reader_->head(), std::move(body));
            }
            const bool stale = lease->reused && resends == 0 && !reader_->any_response_byte() &&
                               reader_->stale_connection();
            release();
            if (stale) {  // the one transparent resend of a stale pooled connection
                ++resends;
                pool_counters().resent.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
        }
        if (is_cancelled(&token_)) return Error(ErrorCode::cancelled, "stream cancelled");
        auto delay = retry_delay(*error, attempt, call_.settings.max_retries, hooks,
                                 hooks && hooks->now ? hooks->now() : Clock::now(), call_.total_by);
        if (!delay) return error;
        log(LogLevel::info, "stream: retrying after " + std::to_string(delay->count()) + " ms: " + error->message);
        retry_sleep(*delay, hooks, &token_);
        if (is_cancelled(&token_)) return Error(ErrorCode::cancelled, "stream cancelled while waiting to retry");
        ++attempt;
        resends = 0;
    }
}

void StreamRequest::drain_and_release(Milliseconds budget) {
    if (!reader_) return;
    params_.deadlines.idle = budget;
    params_.deadlines.total_by = std::min(params_.deadlines.total_by, Clock::now() + budget);
    for (;;) {
        std::string ignored;
        Error error;
        auto piece = reader_->read_body_piece(ignored, error);
        if (piece != ResponseReader::Piece::data) break;  // end (reusable) or error (closed below)
    }
    release();
}

ResponseReader::Piece StreamRequest::read(std::string& out, Error& error) {
    return reader_->read_body_piece(out, error);
}

}  // namespace detail
}  // namespace nous::http
