// One request/response exchange: send, head, body whole or piece by piece.

#include "transport/exchange.hpp"

#include <cstring>

#include "codec/request_head.hpp"
#include "core/limits.hpp"
#include "transport/io_wait.hpp"

namespace nous::http::detail {

namespace {

ErrorCode code_for(IoStatus s) {
    switch (s) {
        case IoStatus::timeout_read:
            return ErrorCode::timeout_read;
        case IoStatus::timeout_total:
            return ErrorCode::timeout_total;
        case IoStatus::cancelled:
            return ErrorCode::cancelled;
        default:
            return ErrorCode::truncated;
    }
}

bool is_timeout_or_cancel(IoStatus s) {
    return s == IoStatus::timeout_read || s == IoStatus::timeout_total || s == IoStatus::cancelled;
}

/// A body read that failed: a deadline or a cancel, else a cut body.
Error body_read_error(const IoResult& r) {
    return Error(code_for(r.status), is_timeout_or_cancel(r.status)
                                         ? "reading the body: " + r.detail
                                         : "body cut short (" + r.detail + ")");
}

}  // namespace

Error body_wait_error(Expiry expiry) {
    const IoStatus status = timeout_status(expiry);
    return body_read_error(IoResult{
        status, 0, status == IoStatus::timeout_total ? "total deadline passed" : "timed out"});
}

ResponseReader::ResponseReader(Transport& transport, const ExchangeParams& params, char* buffer,
                               std::size_t size, std::size_t grow_to)
    : transport_(transport), params_(params), buffer_(buffer), size_(size), grow_to_(grow_to) {}

void ResponseReader::grow() {
    auto larger = std::make_unique_for_overwrite<char[]>(grow_to_);
    std::memcpy(larger.get(), buffer_, have_);
    grown_ = std::move(larger);
    buffer_ = grown_.get();
    size_ = grow_to_;
}

std::optional<Error> ResponseReader::send(const Url& url, std::string_view body,
                                          const Headers& headers, std::string_view method) {
    static const Headers no_extra;
    const std::string head = serialize_request_head(
        url, body.size(), headers, transport_.absolute_form(), params_.proxy_authorization,
        params_.extra_headers ? *params_.extra_headers : no_extra, method);
    IoResult w = transport_.write_all(head, body, params_.deadlines, params_.cancel);
    if (w.status == IoStatus::ok) {
        request_sent_ = true;
        return std::nullopt;
    }
    if (is_timeout_or_cancel(w.status))
        return Error(code_for(w.status), "sending the request: " + w.detail);
    write_failed_ = true;
    stale_connection_ = w.status == IoStatus::reset;
    // A server that answers early (413, 401) and closes while the body is
    // still uploading: its response is in our receive buffer. Return it.
    Error failure(ErrorCode::connection_closed,
                  "connection lost while sending the request (" + w.detail + ")");
    if (!read_head()) {
        head_read_ = true;
        return std::nullopt;
    }
    return failure;
}

std::optional<Error> ResponseReader::fill() {
    IoResult r = transport_.read_some(buffer_, size_, params_.deadlines, params_.cancel);
    if (r.status == IoStatus::ok) {
        if (!any_response_byte_) first_byte_ = Clock::now();
        any_response_byte_ = true;
        took(r.bytes);
        return std::nullopt;
    }
    if (is_timeout_or_cancel(r.status))
        return Error(code_for(r.status), "waiting for the response: " + r.detail);
    if (!any_response_byte_) {
        stale_connection_ = r.status == IoStatus::eof || r.status == IoStatus::reset ||
                            r.status == IoStatus::tls_eof;
        // The connection was made and the request went out: the server may
        // have acted on it, so this is not a connect failure.
        return Error(ErrorCode::connection_closed,
                     "connection closed after the request was sent, before any response byte (" +
                         r.detail + ")");
    }
    return Error(ErrorCode::truncated, "response head cut short (" + r.detail + ")");
}

std::optional<Error> ResponseReader::read_head() {
    if (head_read_) return std::nullopt;  // an early response, read while sending
    HeadParser parser;
    std::size_t interim = 0;  // 1xx heads skipped so far
    for (;;) {
        if (used_ == have_)
            if (auto e = fill()) return e;
        std::size_t consumed = 0;
        auto status = parser.feed(std::string_view(buffer_ + used_, have_ - used_), consumed);
        used_ += consumed;
        if (status == HeadParser::Status::error)
            return Error(ErrorCode::protocol, "malformed response: " + parser.error());
        if (status == HeadParser::Status::need_more) continue;
        head_ = parser.take_head();
        if (head_.status >= 200) break;
        // Every 1xx is skipped: POCO skips only 100 (docs/design/poco-traps.md#informational).
        if (head_.status == 101)
            return Error(ErrorCode::protocol, "unexpected 101 Switching Protocols");
        if (++interim > limits::max_interim_responses)
            return Error(ErrorCode::protocol, interim_overflow_message());
        parser.reset();
    }
    framer_.start(body_mode_for(head_), head_.content_length.value_or(0));
    return std::nullopt;
}

bool ResponseReader::reusable() const noexcept {
    // Bytes after the end of the response (we never pipeline) mean the stream is out of sync.
    return !write_failed_ && head_.keep_alive() && framer_.done() &&
           framer_.mode() != BodyFramer::Mode::until_close && used_ == have_;
}

ResponseReader::Piece ResponseReader::read_body_piece(std::string& out,
                                                      std::optional<Error>& error) {
    for (;;) {
        if (framer_.done()) return Piece::end;
        if (used_ < have_) {
            std::size_t before = out.size();
            used_ += framer_.feed(buffer_ + used_, have_ - used_, out);
            if (framer_.failed()) return framing_error(error);
            if (out.size() > before) return Piece::data;
            continue;
        }
        // Body bytes with no framing before them (a Content-Length body, or
        // inside a large chunk) are read straight into `out`: no copy. Small
        // remainders go through the buffer: one read then serves many chunks.
        if (const std::size_t want = direct_read_size()) {
            const std::size_t before = out.size();
            out.resize(before + want);
            std::size_t got = 0;
            const bool ok = read_direct(out.data() + before, want, got, error);
            out.resize(before + got);
            return ok ? Piece::data : Piece::error;
        }
        Piece last;
        if (!refill(last, error)) return last;
    }
}

ResponseReader::Piece ResponseReader::read_body_view(std::string_view& out) {
    std::optional<Error>& error = body_failure_;
    for (;;) {
        if (Piece piece; read_buffered_view(piece, out)) return piece;
        // A large run of data: read into a buffer of its own, up to 256 KiB
        // at a time (the read buffer would take four reads for it).
        if (const std::size_t want = direct_read_size()) {
            if (direct_buffer_.size() < want) direct_buffer_.resize(want);
            std::size_t got = 0;
            if (!read_direct(direct_buffer_.data(), want, got, error)) return Piece::error;
            out = std::string_view(direct_buffer_.data(), got);
            return Piece::data;
        }
        Piece last;
        if (!refill(last, error)) return last;
    }
}

ResponseReader::Piece ResponseReader::framing_error(std::optional<Error>& error) const {
    error = Error(ErrorCode::protocol, "malformed chunked body: " + framer_.error());
    return Piece::error;
}

std::size_t ResponseReader::direct_read_size() const noexcept {
    if (used_ < have_ || framer_.mode() == BodyFramer::Mode::until_close) return 0;
    const std::uint64_t direct = framer_.direct_read_limit();
    // Up to 256 KiB per read: fewer hand-offs between a stream's reader and consumer.
    if (direct < 16384) return 0;
    return static_cast<std::size_t>(std::min<std::uint64_t>(direct, limits::io_piece_bytes));
}

bool ResponseReader::read_direct(char* into, std::size_t want, std::size_t& got,
                                 std::optional<Error>& error) {
    IoResult r = transport_.read_some(into, want, params_.deadlines, params_.cancel);
    if (r.status != IoStatus::ok) {
        error = body_read_error(r);
        return false;
    }
    framer_.direct_received(r.bytes);
    got = r.bytes;
    return true;
}

inline bool ResponseReader::refill(Piece& last, std::optional<Error>& error) {
    IoResult r = transport_.read_some(buffer_, size_, params_.deadlines, params_.cancel);
    if (r.status == IoStatus::eof && framer_.complete_at_eof()) {
        if (framer_.mode() == BodyFramer::Mode::until_close) framer_.start(BodyFramer::Mode::none);
        last = Piece::end;
        return false;
    }
    if (r.status != IoStatus::ok) {
        error = body_read_error(r);
        last = Piece::error;
        return false;
    }
    took(r.bytes);
    return true;
}

std::optional<Error> ResponseReader::read_whole_body(std::string& out, std::size_t limit) {
    auto too_large = [&](std::string what) {
        Error e(ErrorCode::too_large, std::move(what));
        e.status = head_.status;
        e.headers = head_.headers;
        return e;
    };
    if (framer_.mode() == BodyFramer::Mode::length) {
        std::uint64_t length = *head_.content_length;
        // Checked before reserving: a Content-Length alone never makes us allocate past the cap.
        if (length > limit)
            return too_large("response Content-Length " + std::to_string(length) +
                             " exceeds the limit of " + std::to_string(limit) + " bytes");
        // One allocation for the whole body; socket reads land in it directly.
        out.resize(static_cast<std::size_t>(length));
        std::size_t filled = std::min<std::size_t>(have_ - used_, static_cast<std::size_t>(length));
        std::memcpy(out.data(), buffer_ + used_, filled);
        used_ += filled;
        framer_.direct_received(filled);
        while (!framer_.done()) {
            IoResult r = transport_.read_some(out.data() + filled, out.size() - filled,
                                              params_.deadlines, params_.cancel);
            if (r.status != IoStatus::ok)
                return Error(code_for(r.status), is_timeout_or_cancel(r.status)
                                                     ? "reading the body: " + r.detail
                                                     : "body cut short: " + std::to_string(filled) +
                                                           " of " + std::to_string(length) +
                                                           " bytes (" + r.detail + ")");
            filled += r.bytes;
            framer_.direct_received(r.bytes);
        }
        return std::nullopt;
    }
    if (framer_.mode() == BodyFramer::Mode::chunked) out.reserve(16 * 1024);
    for (;;) {
        std::optional<Error> error;
        switch (read_body_piece(out, error)) {
            case Piece::end:
                return std::nullopt;
            case Piece::error:
                return error;
            case Piece::data:
                if (out.size() > limit)
                    return too_large("response body exceeds the limit of " + std::to_string(limit) +
                                     " bytes");
                break;
        }
    }
}

}  // namespace nous::http::detail
