#pragma once
// Streaming responses (SSE and friends) with memory bounded in bytes: the
// Stream handle and stream(). Decoders: nous/http/decoder.hpp; stream
// backends of one's own: nous/http/backend.hpp.

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/http/decoder.hpp"
#include "nous/http/event.hpp"

namespace nous::http {

class ChunkSource;  // nous/http/backend.hpp: where a stream's bytes come from

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
    std::uint64_t bytes = 0;              ///< body bytes received (after transfer decoding)
    std::uint64_t items = 0;              ///< events delivered
    std::uint64_t parks = 0;              ///< times the reader parked on a full window
    std::chrono::microseconds parked{0};  ///< total time parked
    std::size_t peak_inflight_bytes = 0;  ///< most bytes queued between reader and consumer
    bool done_seen = false;               ///< `data: [DONE]` arrived
    int status = 0;                       ///< HTTP status, once known
};

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
    /// The server's request id (as Response::request_id), once the head
    /// arrived; "" before, or when the server sent none. Thread-safe.
    std::string request_id() const;

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

/// Streams alive in this process now (window and pull).
std::size_t live_streams() noexcept;

}  // namespace nous::http
