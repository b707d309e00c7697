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

/// Error for a stream whose data (not its HTTP framing) is malformed.
Error malformed_stream(std::string message);

}  // namespace nous::http::detail
