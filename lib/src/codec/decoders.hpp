#pragma once
// Internal view of the decoders: tests read their work counters.

#include "nous/http/stream.hpp"

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
    virtual std::optional<Error> feed_views(std::string_view bytes, std::vector<EventView>& out, bool& done) = 0;
};

/// Error for a stream whose data (not its HTTP framing) is malformed.
Error malformed_stream(std::string message);

}  // namespace nous::http::detail
