#pragma once
// Per-call options, application config, and the hooks tests inject.
// Every default lives in defaults:: with the reason for it.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nous::http {

using Milliseconds = std::chrono::milliseconds;

namespace defaults {
/// Generous: LLM responses can take minutes before the first byte.
inline constexpr Milliseconds read_timeout{180'000};
/// Covers resolution, TCP to every address in turn, and the TLS handshake.
inline constexpr Milliseconds connect_timeout{30'000};
/// Like the official OpenAI SDK: transient 408/409/429/5xx are common.
inline constexpr int max_retries = 2;
/// Largest successful `post` body we buffer.
inline constexpr std::size_t max_response_bytes = 64u << 20;
/// Error bodies (4xx/5xx) are kept for diagnosis, never unbounded.
inline constexpr std::size_t max_error_body_bytes = 10u << 20;
/// Connections open at once to one origin, streams included (openai-python's
/// max_connections): a busy app server runs hundreds of concurrent streams.
inline constexpr std::size_t pool_max_per_origin = 1000;
/// Idle keep-alive connections kept per origin (openai-python's
/// max_keepalive_connections): more would hold server slots for nothing.
inline constexpr std::size_t pool_max_idle_per_origin = 100;
/// Idle pooled connections older than this (from response completion) are closed;
/// most servers drop idle keep-alive connections after 60 s or more.
inline constexpr Milliseconds pool_idle_timeout{30'000};
/// Stream byte window: the reader parks above the high mark...
inline constexpr std::size_t window_high_bytes = 8u << 20;
/// ...until the consumer brings the in-flight bytes under the low mark...
inline constexpr std::size_t window_low_bytes = 1u << 20;
/// ...or this long has passed since it parked: then backpressure_overflow.
inline constexpr Milliseconds window_max_park{30'000};
/// Largest event (its data) a stream decoder assembles; one byte more is buffer_overflow.
inline constexpr std::size_t max_event_bytes = 10u << 20;
/// Concurrent streams in the process; past it a stream yields `saturated`.
/// Worst-case memory is this times (window + decoder cap + kernel receive buffer).
inline constexpr std::size_t max_concurrent_streams = 1000;
}  // namespace defaults

/// How a stream's body is cut into events.
enum class StreamFormat {
    sse,         ///< text/event-stream (WHATWG interpretation); `data: [DONE]` ends the stream
    ndjson,      ///< one JSON value per line (Ollama)
    json_array,  ///< a JSON array streamed element by element (Gemini streamGenerateContent)
    raw,  ///< the body bytes as received (after transfer decoding), up to and including [DONE]
    aws_event_stream,  ///< application/vnd.amazon.eventstream (Bedrock's converse-stream)
};

class Decoder;
struct EventView;

namespace detail {
struct CancelAccess;
}
namespace testing {
struct Hooks;
}

/// Cancels blocked calls from another thread. The token must outlive the calls
/// it is passed to; one token may be shared by many concurrent calls, and
/// cancel() ends every one of them. Safe to call from any thread, any number of times.
class CancelToken {
  public:
    CancelToken();
    ~CancelToken();
    CancelToken(const CancelToken&) = delete;
    CancelToken& operator=(const CancelToken&) = delete;

    /// Thread-safe. Makes the call it is attached to return `cancelled` promptly.
    void cancel() noexcept;
    /// Thread-safe.
    bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  private:
    friend struct detail::CancelAccess;
    struct State;
    // The flag beside its owner, not in State: a stream reads it before every
    // read, and a stream's own token lives among the stream's other hot state.
    std::atomic<bool> cancelled_{false};
    std::unique_ptr<State> state_;  ///< the targets a cancel interrupts
};

/// While it lives, a cancel of `token` wakes the waiters of `waiters`: a
/// wait of the application's own (for a slot, a budget) sleeps until its
/// condition, its deadline or the cancel, and needs no slices to see the
/// cancel. The waiters are notified under `mutex`, so a waiter between its
/// look at `token->cancelled()` and its wait is not missed. Create it
/// before locking `mutex` (a cancel takes the token's lock, then `mutex`);
/// created after the cancel, it notifies at once. A null token wakes nothing.
class CancelWakeup {
  public:
    CancelWakeup(const CancelToken* token, std::mutex& mutex, std::condition_variable& waiters);
    ~CancelWakeup();
    CancelWakeup(const CancelWakeup&) = delete;
    CancelWakeup& operator=(const CancelWakeup&) = delete;

  private:
    struct Registration;
    std::unique_ptr<Registration> registration_;  ///< none without a token
};

/// Per-call options. Unset optionals fall back to the app Config, then defaults::.
struct Options {
    /// Backend name; empty: NOUS_HTTP_BACKEND, then app config, then "pooled".
    std::string backend;
    std::optional<Milliseconds> connect_timeout;
    /// Idle read timeout: the longest gap between two received bytes.
    std::optional<Milliseconds> read_timeout;
    /// Total deadline for the whole call, retries included. None by default.
    std::optional<Milliseconds> total_timeout;
    std::optional<int> max_retries;
    std::optional<std::size_t> max_response_bytes;
    /// Extra trust anchor (PEM) added to the system CA store.
    std::string ca_file;
    /// Skip certificate verification. Explicit, logged, and pooled apart.
    bool insecure = false;
    /// SO_RCVBUF set before connect (0: kernel default).
    int receive_buffer_bytes = 0;
    /// TCP_NODELAY on the client socket (benchmarks turn it off).
    bool tcp_nodelay = true;
    /// `curl` backend: speak HTTP/1.1 even where the server offers HTTP/2.
    bool force_http1 = false;
    /// Cancellation from another thread; must outlive the call (a stream's
    /// call lasts as long as its Stream). Ends posts and streams alike.
    const CancelToken* cancel = nullptr;
    /// Without an `Idempotency-Key` header of the caller's, every attempt of
    /// the call carries one generated key (UUID v4), retries on or off, so
    /// that a server or gateway honouring the header drops a duplicate of a
    /// request that was lost after it was sent. A request that went out whole
    /// on a reused connection that then closed is resent only with a key.
    /// The curl backend sends a key even when this is false (libcurl resends
    /// such a request by itself).
    bool idempotency_key = true;
    /// Called before each attempt goes out, retries included, with the
    /// headers it will carry (a copy of the call's): a request signer (AWS
    /// SigV4) signs each attempt at its sending time. Posts and streams alike.
    std::function<void(std::string_view method, std::string_view url, std::string_view body,
                       std::vector<std::pair<std::string, std::string>>& headers)>
        before_each_attempt;
    /// Tests only (nous/http/testing.hpp): time, sleep and randomness of the retry policy.
    const testing::Hooks* test_hooks = nullptr;
    /// For a caller that can read only the answer it asked for (run_chat,
    /// count_tokens and embed turn it on): a 2xx body in a Content-Encoding
    /// the request did not ask for (the library decodes none), or an SSE
    /// stream answered with a JSON document (a server that did not stream),
    /// is a `protocol` error carrying the answer's status, headers and body
    /// (capped at the error body limit). Off: a post's body is returned
    /// byte-exact and a stream reads what it is sent, whatever its labels.
    /// The built-in post backends and every stream apply it.
    bool refuse_unreadable_answers = false;

    // ---- streams ----
    /// Stream backend; empty: NOUS_HTTP_STREAM_BACKEND, then app config, then "window".
    std::string stream_backend;
    StreamFormat stream_format = StreamFormat::sse;
    /// A custom decoder (overrides stream_format), made once per stream.
    std::function<std::unique_ptr<Decoder>()> decoder;
    std::optional<std::size_t> window_high_bytes;
    std::optional<std::size_t> window_low_bytes;
    std::optional<Milliseconds> window_max_park;
    std::optional<std::size_t> max_event_bytes;
    /// Deadlines that count content, not bytes: the longest wait from the
    /// call's start to its first content event, and the longest wait for the
    /// next one (the consumer waiting in next()). SSE comments are never
    /// events, so keep-alive comments never reset them; `is_content_event`
    /// can leave out a provider's pings too. Expiry ends the stream with
    /// `timeout_read` naming the deadline. Unset (the default): none; the
    /// byte-level read_timeout applies as always.
    std::optional<Milliseconds> first_event_timeout;
    std::optional<Milliseconds> event_idle_timeout;
    /// Which events count as content for the two deadlines; empty: every
    /// event. Called on the consumer's thread with each event handed out.
    std::function<bool(const EventView&)> is_content_event;
};

/// Application-wide configuration: `configure()` in code, or a JSON file named
/// by NOUS_HTTP_CONFIG with the same keys (code wins over the file).
struct Config {
    std::optional<std::string> backend;
    std::optional<std::string> stream_backend;
    std::optional<Milliseconds> connect_timeout;
    std::optional<Milliseconds> read_timeout;
    std::optional<int> max_retries;
    std::optional<std::size_t> pool_max_per_origin;
    std::optional<std::size_t> pool_max_idle_per_origin;
    std::optional<Milliseconds> pool_idle_timeout;
    std::optional<std::size_t> window_high_bytes;
    std::optional<std::size_t> window_low_bytes;
    std::optional<Milliseconds> window_max_park;
    std::optional<std::size_t> max_concurrent_streams;
    std::optional<Milliseconds> first_event_timeout;
    std::optional<Milliseconds> event_idle_timeout;
};

/// Replace the programmatic app config. Thread-safe.
void configure(const Config& config);
/// The programmatic config merged over the NOUS_HTTP_CONFIG file.
Config current_config();

}  // namespace nous::http
