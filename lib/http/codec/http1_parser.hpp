#pragma once
// Sans-I/O HTTP/1.x response framing: bytes in, head and body bytes out.
// We parse the framing ourselves instead of using POCO's response streams
// because POCO 1.11 reads a truncated chunked body and a bad chunk-size line
// as a clean EOF (docs/design/poco-traps.md#silent-truncation), skips only
// 100 Continue among the 1xx responses (#informational), and caps header
// values at 8 KiB (#header-limits).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/limits.hpp"
#include "nous/http/error.hpp"

namespace nous::http::detail {

using limits::max_header_bytes;
using limits::max_header_fields;

struct ResponseHead {
    int status = 0;
    int version_minor = 1;  ///< HTTP/1.x
    std::string reason;
    Headers headers;  ///< lower-case names
    std::optional<std::uint64_t> content_length;
    bool chunked = false;
    bool connection_close = false;
    bool connection_keep_alive = false;
    /// Both Transfer-Encoding and Content-Length: read by Transfer-Encoding,
    /// and the connection is never reused.
    bool framing_conflict = false;

    bool keep_alive() const noexcept {
        if (framing_conflict) return false;
        return version_minor >= 1 ? !connection_close : connection_keep_alive;
    }
    std::string http_version() const { return "HTTP/1." + std::to_string(version_minor); }
};

/// Parses one response head (status line + header fields + blank line).
class HeadParser {
  public:
    enum class Status { need_more, done, error };

    /// Feeds bytes; `consumed` is set to the bytes used from `input` (all of
    /// them while need_more; up to the end of the head when done).
    Status feed(std::string_view input, std::size_t& consumed);
    const ResponseHead& head() const noexcept { return head_; }
    ResponseHead take_head() { return std::move(head_); }
    const std::string& error() const noexcept { return error_; }
    void reset();
    /// Bytes buffered so far (for the "any response byte seen" rule).
    std::size_t buffered() const noexcept { return buf_.size(); }
    /// Bytes examined while looking for the end of heads (tests prove linear work).
    std::size_t bytes_scanned() const noexcept { return bytes_scanned_; }

    /// Parses "HTTP/1.x NNN reason" into `head`; the reason why not otherwise.
    static std::optional<std::string> parse_status_line(std::string_view line, ResponseHead& head);

  private:
    Status parse(std::string_view head);
    std::size_t find_head_end(std::string_view text, std::size_t from);
    Status fail(std::string why);

    std::string buf_;
    std::size_t scanned_ = 0;
    std::size_t bytes_scanned_ = 0;
    bool status_line_checked_ = false;
    ResponseHead head_;
    std::string error_;
};

/// Decodes the body framing after a head: Content-Length, chunked, or until close.
class BodyFramer {
  public:
    enum class Mode { none, length, chunked, until_close };

    void start(Mode mode, std::uint64_t length = 0);
    /// Consumes framing and data from `input`, appending data to `out`.
    /// Returns the bytes consumed; stops at the end of the body.
    std::size_t feed(const char* input, std::size_t n, std::string& out);
    /// The same step without the copy: consumes framing from `input` up to
    /// and including the next run of data bytes, which `data` then points at
    /// (inside `input`; empty when the input held only framing). Returns the
    /// bytes consumed (0 when it failed()).
    std::size_t next_data(const char* input, std::size_t n, std::string_view& data);
    /// Data bytes the caller may read straight into `out` now (0 when framing
    /// bytes come next): the zero-copy path for large bodies.
    std::uint64_t direct_read_limit() const noexcept;
    /// Reports `n` data bytes the caller placed in `out` itself.
    void direct_received(std::size_t n) noexcept;

    bool done() const noexcept { return state_ == State::done; }
    bool failed() const noexcept { return state_ == State::failed; }
    const std::string& error() const noexcept { return error_; }
    Mode mode() const noexcept { return mode_; }
    /// At EOF: whether the body is complete (until_close bodies end at EOF).
    bool complete_at_eof() const noexcept { return done() || mode_ == Mode::until_close; }

  private:
    enum class State { size_line, data, data_crlf, trailers, done, failed };
    std::size_t fail(std::string why);
    /// A whole chunk-size, chunk-data CRLF or trailer line, without its LF:
    /// the state it leads to; false when it is malformed (failed).
    bool end_line(std::string_view line);

    Mode mode_ = Mode::none;
    State state_ = State::done;
    std::uint64_t remaining_ = 0;
    std::string line_;  ///< partial chunk-size or trailer line
    std::size_t trailer_bytes_ = 0;
    std::string error_;
};

/// Why a response is refused after more than limits::max_interim_responses
/// 1xx heads: one wording for every backend that counts them.
std::string interim_overflow_message();

/// Picks the framing of a response to a POST per RFC 9112 section 6.3.
BodyFramer::Mode body_mode_for(const ResponseHead& head);

}  // namespace nous::http::detail
