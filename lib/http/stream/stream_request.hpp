#pragma once
// Opening a streamed response through the shared call pipeline: a pooled
// connection (warm when one is free), the request sent, the head read, the
// retry policy applied before the first body byte; then the body piece by
// piece. Used by the window and pull backends.

#include <memory>
#include <mutex>
#include <utility>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "nous/http/stream.hpp"
#include "transport/call.hpp"

namespace nous::http::detail {

/// Everything a stream needs after stream() returns (the caller's arguments are copied).
struct StreamCall {
    std::string body;
    Headers headers;        ///< with content-type and accept added unless given
    Options options;        ///< cancel pointer cleared: the stream has its own token
    PreparedCall prepared;  ///< prepared.options points at `options`
    /// The window's read relay, unless NOUS_HTTP_WINDOW_RELAY=off (reader-only:
    /// for diagnosis, and for the tests of that mode).
    bool window_relay = true;

    /// After a 2xx head: the request is never sent again (a stream's
    /// retries all come before its head), so its body and headers go. A
    /// long conversation's body was otherwise held for the stream's life.
    void drop_request() noexcept {
        std::string().swap(body);
        Headers().swap(headers);
    }
};

/// Validates and copies a stream call; an error is the stream's first item.
Result<std::unique_ptr<StreamCall>> make_stream_call(std::string_view url, std::string_view body,
                                                     const Headers& headers, const Options& options,
                                                     const EnvSnapshot& env, const Config& config);

/// A stream's first read buffer. Its source keeps it as a member, after
/// the members it touches at every token: every read lands at the buffer's
/// start, so those lines follow the source's own, in one allocation with
/// them (an allocation of its own, as it was, could land anywhere in the
/// heap). A read that fills it grows the reader's buffer to
/// limits::read_buffer_bytes (ResponseReader).
struct StreamReadBuffer {
    char bytes[limits::stream_first_read_bytes];  // not initialised: a read fills it
};

class StreamRequest {
  public:
    /// `call`'s request is dropped once open() has its 2xx head (StreamCall::drop_request).
    StreamRequest(StreamCall& call, const CancelToken& token, StreamReadBuffer& buffer);
    ~StreamRequest();

    /// Connects, sends and reads the head, retrying per the policy. A non-2xx
    /// answer becomes an http_status error carrying its body (at most 10 MiB).
    /// After a 2xx head the call's request is dropped: nothing sends it again.
    std::optional<Error> open();
    int status() const noexcept { return status_; }
    /// The 2xx response's headers, taken out of the head (after open()
    /// succeeded; once): the reader has read what it needs of them, and a
    /// copy beside the source's own was ~1 KB a stream for its whole life.
    Headers take_headers() noexcept { return std::move(attempt_->reader().head().headers); }
    /// The next piece of body (after open() succeeded).
    ResponseReader::Piece read(std::string& out, std::optional<Error>& error);
    /// The same without a copy: `out` points into the read buffer until the
    /// next read. Piece::error: read_failure() says what failed.
    ResponseReader::Piece read_view(std::string_view& out) {
        return attempt_->reader().read_body_view(out);  // inline: one frame less a read
    }
    /// The same from the read buffer alone (ResponseReader::read_buffered_view).
    bool read_buffered_view(ResponseReader::Piece& piece, std::string_view& out) {
        return attempt_->reader().read_buffered_view(piece, out);
    }
    /// After read_view() or read_buffered_view() returned Piece::error: why (once).
    Error read_failure() { return attempt_->reader().take_body_failure(); }
    /// Gives the connection back: to the pool when the body was read to its end.
    void release();
    /// Done with the response: the connection goes (closed unless release()
    /// gave it back already). Nothing may be read after.
    void close() noexcept { attempt_.reset(); }
    /// The body's next read needs no wait (ResponseReader::input_pending).
    bool input_pending() noexcept { return attempt_->reader().input_pending(); }
    /// The body's next read returns at once (ResponseReader::readable_now).
    bool readable_now() noexcept { return attempt_->reader().readable_now(); }
    /// The descriptor to wait on for body bytes, or -1.
    int wait_fd() noexcept { return attempt_->reader().wait_fd(); }
    /// The deadlines the body's reads run under.
    const Deadlines& deadlines() noexcept { return attempt_->params().deadlines; }
    /// After [DONE]: read what remains of the body for at most `budget`
    /// (usually only the last chunk's terminator, already in the socket), then
    /// release, so the connection can be pooled.
    void drain_and_release(Milliseconds budget);

  private:
    /// Why a 2xx answer is not the stream asked for (answer_head_check.hpp), or none.
    std::optional<Error> unreadable_answer(const Headers& answer, const Headers& request) const;

    StreamCall& call_;
    const CancelToken& token_;
    StreamReadBuffer& buffer_;
    std::optional<Attempt> attempt_;  ///< in place: beside the source's other hot members
    int status_ = 0;
};

/// The response headers a stream source publishes to other threads.
class SharedHeaders {
  public:
    void set(Headers&& headers) {
        std::lock_guard lock(mutex_);
        headers_ = std::move(headers);
    }
    Headers get() const {
        std::lock_guard lock(mutex_);
        return headers_;
    }

  private:
    mutable std::mutex mutex_;
    Headers headers_;
};

/// RAII share of the concurrent streams cap.
class StreamSlot {
  public:
    StreamSlot() = default;
    StreamSlot(StreamSlot&& other) noexcept : held_(std::exchange(other.held_, false)) {}
    StreamSlot& operator=(StreamSlot&&) = delete;
    /// False when the cap is reached (nothing is held then).
    bool acquire(std::size_t cap) noexcept;
    ~StreamSlot();

  private:
    bool held_ = false;
};

}  // namespace nous::http::detail
