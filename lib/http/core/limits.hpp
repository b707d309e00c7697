#pragma once
// Every internal limit and size, each with its reason: the knobs a user may
// set live in nous::http::defaults (nous/http/options.hpp); these are the
// ones we fixed. A rule written twice drifts: code uses these names.

#include <chrono>
#include <cstddef>

#include "nous/http/options.hpp"

namespace nous::http::detail::limits {

// ---- response heads (RFC 9112 leaves the limits to us) ----------------------
/// Fields in one response head: POCO's own limit, and far more than any
/// provider sends (nginx: 8, OpenAI: ~20); past it `protocol`.
inline constexpr std::size_t max_header_fields = 100;
/// Bytes of one response head: what nginx itself accepts by default (4 x 8 KiB
/// buffers) with room to spare; past it `protocol`.
inline constexpr std::size_t max_header_bytes = 64 * 1024;
/// Interim (1xx) responses skipped before the answer (a 100 Continue, Early
/// Hints, 102 Processing sent as a keep-alive); past it `protocol`. Without
/// a cap, a server writing 1xx heads forever held the call forever, each
/// head inside the idle timeout.
inline constexpr std::size_t max_interim_responses = 100;
/// A chunk-size line (hex digits and extensions): real ones are < 20 bytes.
inline constexpr std::size_t max_chunk_line = 4096;

// ---- JSON from the network --------------------------------------------------
/// Nesting depth allowed in any parse of server bytes: RapidJSON's parser
/// recurses, and 200 KB of `[` would overflow the stack.
inline constexpr std::size_t max_json_depth = 256;

// ---- reading and writing ----------------------------------------------------
/// The read buffer of one call (head, small bodies, chunk framing): one recv
/// takes a whole typical response or many SSE events.
inline constexpr std::size_t read_buffer_bytes = 64 * 1024;
/// A stream's first read buffer: a token's event or several fit, and a read
/// that fills it grows the buffer to read_buffer_bytes for the stream's
/// later reads. Kept for a stream's whole life, the 64 KiB buffer's
/// partly-used first and last pages were ~2.7 KB of resident memory a stream
/// (docs/design/backpressure.md, "The memory bound per stream").
inline constexpr std::size_t stream_first_read_bytes = 2 * 1024;
/// Largest piece read straight into the caller's body, and largest TLS write:
/// fewer hand-offs between a stream's reader and its consumer, and a 256 KiB
/// request body in one SSL_write.
inline constexpr std::size_t io_piece_bytes = 256 * 1024;
/// After [DONE], how long a stream keeps reading to reach the body's end (the
/// last chunk's terminator is usually in the socket already) so that its
/// connection can be pooled.
inline constexpr Milliseconds drain_after_done{5};

/// How long a window stream's consumer may stay away (out of next()) before
/// the read watch wakes its reader to read ahead: at least this, at most
/// twice it (the checks come due together, on a grid of this step, so that
/// the watch's thread wakes at most 40 times a second however many streams
/// book them). A consumer back sooner, as one that keeps up always is,
/// leaves its socket disarmed and costs no epoll_ctl: arming at every
/// departure and disarming at every return cost two a token, 1.7-1.9 us of
/// CPU at 10,000 streams (docs/BENCHMARKS.md, "Scale"). Bytes that arrive
/// meanwhile wait in the socket's receive buffer.
inline constexpr Milliseconds relay_arm_delay{25};

// ---- threads ----------------------------------------------------------------
/// A window stream's reader thread's stack. It runs the request (connect,
/// the TLS handshake, the head, the body reads: tens of KiB at the deepest;
/// names are resolved on a thread of their own), never the caller's code but
/// a log sink. glibc's default is 8 MiB: mapping and unmapping that for every
/// stream cost ~50 us of CPU a stream more on a virtual machine
/// (docs/BENCHMARKS.md). Sanitizer builds keep the default (bigger frames).
inline constexpr std::size_t reader_stack_bytes = 256 * 1024;
/// How long a reader thread whose stream ended waits for the next stream
/// before it exits: a pooled connection's idle expiry. Reused, a thread
/// costs a stream one wake-up instead of a thread's start and end.
inline constexpr std::chrono::seconds reader_idle_expiry{30};

// ---- the retry policy (the official SDKs' numbers) --------------------------
/// First backoff: 0.5 s x 2^n ...
inline constexpr Milliseconds retry_base_delay{500};
/// ... capped at 8 s ...
inline constexpr Milliseconds retry_max_backoff{8000};
/// ... and a server's hint honoured up to 60 s; a longer one returns at once.
inline constexpr Milliseconds retry_max_hint{60000};

// ---- name resolution --------------------------------------------------------
/// Successful lookups are kept this long, as curl's DNS cache keeps them.
inline constexpr std::chrono::seconds dns_cache_ttl{60};
/// Names cached at most (then the cache starts over): bounded memory.
inline constexpr std::size_t dns_cache_entries = 256;
/// Happy Eyeballs: the next address is tried this long after the previous
/// one unless it failed sooner (RFC 8305 section 5 recommends 250 ms).
inline constexpr Milliseconds connection_attempt_delay{250};

// ---- logging ----------------------------------------------------------------
/// Bytes of a body a log line may quote.
inline constexpr std::size_t log_body_bytes = 500;

}  // namespace nous::http::detail::limits
