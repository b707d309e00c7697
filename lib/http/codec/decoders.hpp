#pragma once
// Internal view of the decoders: their work counters (tests prove linear
// work with them), the view path, the SSE scanner the raw format uses, and
// their shared error.

#include <memory>

#include "nous/http/decoder.hpp"

namespace nous::http::detail {

/// Implemented by the built-in decoders: bytes examined so far, for tests that
/// prove linear work however the input is split.
class CountingDecoder : public Decoder {
  public:
    std::uint64_t bytes_scanned() const noexcept { return scanned_; }

  protected:
    std::uint64_t scanned_ = 0;
};

/// Implemented by decoders that can hand out events without copying them:
/// views into `bytes` or into the decoder's own storage, valid until the next
/// call to any feed or finish, and while `bytes` lives.
class ViewDecoder {
  public:
    virtual ~ViewDecoder() = default;
    virtual std::optional<Error> feed_views(std::string_view bytes, std::vector<EventView>& out,
                                            bool& done) = 0;
};

/// A view decoder that can also hand its events out one at a time, with no
/// list in between: `begin(bytes, out, done)` takes a new input (the views of
/// the last input are void) and decodes into `out` what must go through the
/// general path first (the end of an event carried over from the last input);
/// then `next_plain` gives the next event while it is the common single-line
/// `data:` event wholly in the input, and `feed_rest` decodes whatever is left
/// through the general path (as feed_views would). In that order, the events
/// are feed_views' own. The SSE decoder: a small event costs a memchr and a
/// few compares.
class LazyViewDecoder : public ViewDecoder {
  public:
    virtual std::optional<Error> begin(std::string_view bytes, std::vector<EventView>& out,
                                       bool& done) = 0;
    /// event: `out` is the next event; end: the input is used up (no
    /// feed_rest needed); other: the next bytes need feed_rest.
    enum class Next { event, end, other };
    virtual Next next_plain(EventView& out) = 0;
    virtual std::optional<Error> feed_rest(std::vector<EventView>& out, bool& done) = 0;
};

/// The SSE decoder, with how many bytes of the input it consumed: all, or up
/// to the end of a `data: [DONE]` event (the raw decoder stops there).
class SseScanner : public CountingDecoder {
  public:
    virtual std::optional<Error> feed_counting(std::string_view bytes, std::vector<Event>& out,
                                               bool& done, std::size_t& consumed) = 0;
};
std::unique_ptr<SseScanner> make_sse_scanner(std::size_t max_event_bytes);

/// Error for a stream whose data (not its HTTP framing) is malformed.
Error malformed_stream(std::string message);

}  // namespace nous::http::detail
