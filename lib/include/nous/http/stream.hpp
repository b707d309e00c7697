#pragma once
// Streaming responses (SSE and friends) with memory bounded in bytes.

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/client.hpp"

namespace nous::http {

/// The last event ID at an SSE event's dispatch. Stored once per `id` field
/// and shared by every event that carries it: a long id (up to the line cap)
/// is never copied into each event, so decoded but unread events stay within
/// the stream's memory bound.
class EventId {
public:
    EventId() = default;
    EventId(std::string_view id) : value_(id.empty() ? nullptr : std::make_shared<const std::string>(id)) {}
    EventId(const char* id) : EventId(std::string_view(id)) {}
    EventId(const std::string& id) : EventId(std::string_view(id)) {}

    std::string_view view() const noexcept { return value_ ? std::string_view(*value_) : std::string_view(); }
    operator std::string_view() const noexcept { return view(); }
    std::string str() const { return std::string(view()); }
    const char* data() const noexcept { return view().data(); }
    std::size_t size() const noexcept { return view().size(); }
    bool empty() const noexcept { return view().empty(); }

    /// One comparison serves them all: another EventId, a std::string or a
    /// literal converts to std::string_view (C++20 also rewrites `"x" == id`).
    friend bool operator==(const EventId& a, std::string_view b) noexcept { return a.view() == b; }
    friend std::ostream& operator<<(std::ostream& os, const EventId& id) { return os << id.view(); }

private:
    std::shared_ptr<const std::string> value_;
};

/// One decoded item of a stream: an SSE event, an NDJSON line, a JSON-array
/// element, or a raw piece of body.
struct Event {
    /// SSE event name ("message" unless the server named it); "json" for
    /// NDJSON and JSON-array items; "raw" for the raw format.
    std::string type = "message";
    std::string data;
    /// The last event ID at dispatch (it persists across SSE events; shared, not copied).
    EventId id;
    /// An SSE `retry:` field, when the server sent one.
    std::optional<Milliseconds> retry;
};

/// A decoded event without a copy: views into the received bytes or the
/// decoder's storage, valid until the next call to Stream::next_view() or
/// Stream::next() on the same stream. Nothing is allocated per event.
struct EventView {
    std::string_view type = "message";
    std::string_view data;
    /// The last event ID at dispatch (shared storage; null when the decoder has none).
    const EventId* id = nullptr;
    std::optional<Milliseconds> retry;

    std::string_view id_view() const noexcept { return id ? id->view() : std::string_view(); }
};

struct StreamItem {
    enum class Kind { event, done, error };
    Kind kind = Kind::event;
    Event event;                 ///< kind == event
    std::optional<Error> error;  ///< set exactly when kind == error

    bool is_event() const noexcept { return kind == Kind::event; }
    bool is_done() const noexcept { return kind == Kind::done; }
    bool is_error() const noexcept { return kind == Kind::error; }
};

/// next_view()'s item: valid until the next call on the same stream.
struct StreamItemView {
    StreamItem::Kind kind = StreamItem::Kind::event;
    EventView event;               ///< kind == event
    const Error* error = nullptr;  ///< kind == error

    bool is_event() const noexcept { return kind == StreamItem::Kind::event; }
    bool is_done() const noexcept { return kind == StreamItem::Kind::done; }
    bool is_error() const noexcept { return kind == StreamItem::Kind::error; }
};

struct StreamStats {
    std::uint64_t bytes = 0;          ///< body bytes received (after transfer decoding)
    std::uint64_t items = 0;          ///< events delivered
    std::uint64_t parks = 0;          ///< times the reader parked on a full window
    std::chrono::microseconds parked{0};  ///< total time parked
    std::size_t peak_inflight_bytes = 0;  ///< most bytes queued between reader and consumer
    bool done_seen = false;           ///< `data: [DONE]` arrived
    int status = 0;                   ///< HTTP status, once known
};

/// A sans-I/O decoder: bytes in, events out. Implement it for a custom format.
class Decoder {
public:
    virtual ~Decoder() = default;
    /// Consumes `bytes` (any split), appending complete events. Sets `done`
    /// when the format's end marker arrived (bytes after it are not consumed).
    /// An error (buffer_overflow, protocol) ends the stream.
    virtual std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool& done) = 0;
    /// The body ended cleanly (its HTTP framing is complete). SSE discards an
    /// event still missing its blank line (WHATWG); formats whose data is
    /// provably cut (a JSON array without its `]`) report `truncated`.
    virtual std::optional<Error> finish(std::vector<Event>& out) = 0;
};

std::unique_ptr<Decoder> make_sse_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);
std::unique_ptr<Decoder> make_ndjson_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);
std::unique_ptr<Decoder> make_json_array_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);
/// Raw bytes as events, stopping after an SSE `data: [DONE]` event.
std::unique_ptr<Decoder> make_raw_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);

/// Where a stream's body bytes come from. The built-in backends implement it;
/// custom stream backends may too (see make_stream).
class ChunkSource {
public:
    struct Piece {
        enum class Kind { data, end, error };
        Kind kind = Kind::end;
        std::string bytes;           ///< data
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
    /// storage for a later piece (no allocation per read). Default: dropped.
    virtual void recycle(std::string&& bytes) noexcept { (void)bytes; }
    /// The response headers once the head arrived (lower-case names). Thread-safe.
    virtual Headers response_headers() const { return {}; }
};

/// A move-only handle on a streaming response. Not thread-safe except cancel()
/// and stats(). Destroying it cancels the stream and returns promptly.
namespace detail {
struct StreamAccess;
}

class Stream {
public:
    Stream(std::unique_ptr<ChunkSource> source, std::unique_ptr<Decoder> decoder);
    /// A stream whose only item is `error`.
    static Stream failed(Error error);
    Stream(Stream&&) noexcept;
    Stream& operator=(Stream&&) noexcept;
    ~Stream();

    /// Blocks for the next item: an event, `done`, or a terminal error; after a
    /// terminal item (done or error), or the body's clean end, returns nullopt.
    std::optional<StreamItem> next();
    /// As next(), without copying the event: the view stays valid until the
    /// next call to next_view() or next(). The fast path for a consumer that
    /// parses each event at once (no allocation per event with the SSE decoder).
    std::optional<StreamItemView> next_view();
    /// Thread-safe; idempotent. The next item is a `cancelled` error unless the stream had ended.
    void cancel() noexcept;
    /// Thread-safe.
    StreamStats stats() const;
    /// The response headers (lower-case names), once `stats().status` is set. Thread-safe.
    Headers response_headers() const;

    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = StreamItem;
        using difference_type = std::ptrdiff_t;
        using pointer = StreamItem*;
        using reference = StreamItem&;
        iterator() = default;
        explicit iterator(Stream* s) : stream_(s) { ++*this; }
        StreamItem& operator*() { return *item_; }
        StreamItem* operator->() { return &*item_; }
        iterator& operator++() {
            item_ = stream_->next();
            if (!item_) stream_ = nullptr;
            return *this;
        }
        bool operator==(const iterator& o) const { return stream_ == o.stream_; }

    private:
        Stream* stream_ = nullptr;
        std::optional<StreamItem> item_;
    };
    iterator begin() { return iterator(this); }
    iterator end() { return iterator(); }

private:
    friend struct detail::StreamAccess;
    struct State;
    std::unique_ptr<State> state_;
};

/// POST and stream the response. Never throws: every failure, validation
/// included, arrives as the stream's one terminal error item.
Stream stream(std::string_view url, std::string_view body, const Headers& headers = {},
              const Options& options = {});

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

/// The decoder `options` select (custom, else by stream_format).
std::unique_ptr<Decoder> decoder_for(const Options& options);


/// Streams alive in this process now (window and pull).
std::size_t live_streams() noexcept;

}  // namespace nous::http
