#pragma once
// Extension points, for those who implement them: post backends and stream
// backends selectable by name (per call > environment > app config >
// default), and the chunk source a stream backend hands to a Stream.
// Applications that only call post() and stream() need none of this.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"

namespace nous::http {

// ---- post backends ---------------------------------------------------------

/// A request as a backend sees it (views valid during the call).
struct Request {
    std::string_view url;
    std::string_view body;
    const Headers* headers = nullptr;
    std::string_view method = "POST";  ///< request() sends others ("GET", "PUT")
};

/// A `post` implementation selectable by name through the resolution chain.
/// Implementations must be safe to call from many threads at once.
class Backend {
  public:
    virtual ~Backend() = default;
    virtual Result<Response> post(const Request& request, const Options& options) = 0;
};

using BackendFactory = std::function<std::shared_ptr<Backend>()>;

/// Register an application backend (e.g. "myapp.fast"); replaces one of the
/// same name. The factory runs once, on first use. Thread-safe.
void register_backend(const std::string& name, BackendFactory factory);

/// Names selectable now (built-ins that were compiled in, then registered ones).
std::vector<std::string> backend_names();

/// The name the chain picks for these options (per call > env > config > default),
/// or an invalid_argument error for an unknown per-call name.
Result<std::string> resolve_backend_name(const Options& options);

// ---- stream backends -------------------------------------------------------

/// Where a stream's body bytes come from. The built-in backends implement it;
/// custom stream backends may too (see make_stream).
class ChunkSource {
  public:
    struct Piece {
        enum class Kind { data, end, error };
        Kind kind = Kind::end;
        std::string bytes;  ///< data
        /// Data without a copy, instead of `bytes` when not empty: bytes the
        /// source holds, valid until its next next() call (a source reading
        /// on the consumer's thread hands out its read buffer).
        std::string_view view;
        std::optional<Error> error;  ///< set exactly when kind == error
    };
    virtual ~ChunkSource() = default;
    /// Blocks for the next body bytes, the clean end of the body, or an error.
    virtual Piece next() = 0;
    /// Thread-safe: make a blocked or future next() return promptly.
    virtual void cancel() noexcept = 0;
    /// The stream's items are all delivered ([DONE] seen): finish quietly,
    /// keeping the connection when the body is already complete.
    virtual void finish_after_done() noexcept {}
    virtual StreamStats stats() const { return {}; }
    /// The consumer is done with a data piece's bytes: a source may reuse the
    /// storage for a later piece (no allocation per read). Not called for a
    /// view piece. Default: dropped.
    virtual void recycle(std::string&& bytes) noexcept { (void)bytes; }
    /// The response headers once the head arrived (lower-case names). Thread-safe.
    virtual Headers response_headers() const { return {}; }
};

/// A move-only handle on a streaming response. Not thread-safe except cancel()
/// and stats(). Destroying it cancels the stream and returns promptly.

/// A stream implementation selectable by name (per call > NOUS_HTTP_STREAM_BACKEND
/// > app config > "window"). Must be safe to call from many threads at once.
class StreamBackend {
  public:
    virtual ~StreamBackend() = default;
    virtual Stream open(const Request& request, const Options& options) = 0;
};
using StreamBackendFactory = std::function<std::shared_ptr<StreamBackend>()>;
void register_stream_backend(const std::string& name, StreamBackendFactory factory);
std::vector<std::string> stream_backend_names();
Result<std::string> resolve_stream_backend_name(const Options& options);

}  // namespace nous::http
