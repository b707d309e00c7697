#pragma once
// One request/response exchange over a Transport: send, head (every 1xx
// skipped), then the body whole (post) or piece by piece (streams), with
// framing judged in one place (codec/http1_parser).

#include <memory>
#include <optional>
#include <string>

#include "codec/http1_parser.hpp"
#include "core/url.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

struct ExchangeParams {
    Deadlines deadlines;
    const CancelToken* cancel = nullptr;
    std::size_t max_error_body_bytes = defaults::max_error_body_bytes;
    /// "Basic ..." for plain http through an authenticating proxy.
    std::string proxy_authorization;
    /// Headers the library adds (Authorization from URL userinfo, Idempotency-Key).
    const Headers* extra_headers = nullptr;
};

/// The error of a body read whose wait for bytes ran out (`expiry` is idle
/// or total), in the words a timed-out read of the body gets.
Error body_wait_error(Expiry expiry);

class ResponseReader {
  public:
    /// `buffer` holds bytes read past the head; it must outlive the reader.
    /// With `grow_to` beyond `size`, a read that fills `buffer` moves the
    /// reads to a buffer of grow_to bytes of the reader's own: a stream's
    /// small first buffer for events, a large one once the server sends
    /// faster than that.
    ResponseReader(Transport& transport, const ExchangeParams& params, char* buffer,
                   std::size_t size, std::size_t grow_to = 0);

    std::optional<Error> send(const Url& url, std::string_view body, const Headers& headers,
                              std::string_view method = "POST");
    std::optional<Error> read_head();
    const ResponseHead& head() const noexcept { return head_; }
    ResponseHead& head() noexcept { return head_; }

    /// The whole body into `out` (a Content-Length body is sized once and read
    /// into directly); too_large past `limit`.
    std::optional<Error> read_whole_body(std::string& out, std::size_t limit);

    enum class Piece { data, end, error };
    /// Appends the next decoded body bytes (at most one socket read's worth)
    /// to `out`; Piece::error sets `error`.
    Piece read_body_piece(std::string& out, std::optional<Error>& error);
    /// The next run of decoded body bytes without a copy: `out` points into
    /// the read buffer, valid until the next call on this reader. Piece::error:
    /// take_body_failure() says what failed. (No error out-parameter: a
    /// caller's empty optional<Error> was a cold stack line of its own at
    /// every token, its flag written and read 168 bytes past its start.)
    Piece read_body_view(std::string_view& out);
    /// read_body_view() from the read buffer alone, never the socket: false
    /// when the buffer holds no further piece (its framing bytes are taken).
    /// Inline: read_body_view() starts with it at every token.
    bool read_buffered_view(Piece& piece, std::string_view& out) {
        for (;;) {
            if (framer_.done()) {
                piece = Piece::end;
                return true;
            }
            if (used_ == have_) return false;
            used_ += framer_.next_data(buffer_ + used_, have_ - used_, out);
            if (framer_.failed()) {
                piece = framing_error(body_failure_);
                return true;
            }
            if (!out.empty()) {
                piece = Piece::data;
                return true;
            }
        }
    }

    /// What made read_body_view() or read_buffered_view() return Piece::error (once).
    Error take_body_failure() {
        Error e = std::move(*body_failure_);
        body_failure_.reset();
        return e;
    }

    /// The next body read returns without waiting for the socket: the body's
    /// end was reached, bytes are in the read buffer, or the transport may
    /// hold more (Transport::input_pending).
    bool input_pending() const noexcept {
        return framer_.done() || used_ < have_ || transport_.input_pending();
    }
    /// input_pending(), or the socket has bytes now (one peek).
    bool readable_now() noexcept { return input_pending() || transport_.readable_now(); }
    /// The descriptor to wait on for more body bytes (Transport::wait_fd).
    int wait_fd() const noexcept { return transport_.wait_fd(); }

    bool any_response_byte() const noexcept { return any_response_byte_; }
    /// The whole request went out.
    bool request_sent() const noexcept { return request_sent_; }
    /// The failure looked like a peer that had closed an idle connection.
    bool stale_connection() const noexcept { return stale_connection_; }
    /// The response was read to its end and the connection may serve another request.
    bool reusable() const noexcept;
    Clock::time_point first_byte() const noexcept { return first_byte_; }

  private:
    std::optional<Error> fill();  ///< reads more into buffer_ (head phase)
    /// Reads the socket into buffer_ (body phase): false with the Piece that
    /// ends the body (end, or error setting `error`) when there is nothing more.
    // Inlined into its callers: a blocking read's every frame is one more
    // cold stack line when the read returns (docs/design/pool.md, "Reads").
    [[gnu::always_inline]] bool refill(Piece& last, std::optional<Error>& error);
    /// The framer failed: a protocol error.
    Piece framing_error(std::optional<Error>& error) const;
    /// After a read that filled the buffer (took()): the bytes just read
    /// and the reads from here go into grow_to_ bytes of the reader's own.
    /// Once a stream at most.
    [[gnu::noinline, gnu::cold]] void grow();
    /// A read of `bytes` into the buffer, head or body: they are the
    /// buffer's, and a read that filled it grows it.
    void took(std::size_t bytes) noexcept {
        have_ = bytes;
        used_ = 0;
        if (have_ == size_ && size_ < grow_to_) [[unlikely]]
            grow();
    }
    /// How many body bytes to read straight into the caller's storage now (a
    /// large run of data with no framing before it), or 0.
    std::size_t direct_read_size() const noexcept;
    /// That read: false with `error` set when it failed.
    bool read_direct(char* into, std::size_t want, std::size_t& got, std::optional<Error>& error);

    // What every body read touches first, together (a stream's reader finds
    // them cold at each token); the head, read once, after them.
    Transport& transport_;
    const ExchangeParams& params_;
    char* buffer_;
    std::size_t size_;
    std::size_t grow_to_;
    std::size_t have_ = 0, used_ = 0;
    BodyFramer framer_;
    bool any_response_byte_ = false;
    bool request_sent_ = false;
    bool write_failed_ = false;  ///< the request did not go out whole: never reuse
    bool head_read_ = false;     ///< an early response's head was read by send()
    bool stale_connection_ = false;
    Clock::time_point first_byte_{};
    ResponseHead head_;
    std::unique_ptr<char[]> grown_;      ///< the buffer grow() moved the reads to
    std::string direct_buffer_;          ///< read_body_view's large reads (sized on first use)
    std::optional<Error> body_failure_;  ///< the view reads' failure (take_body_failure)
};

}  // namespace nous::http::detail
