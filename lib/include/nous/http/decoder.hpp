#pragma once
// Sans-I/O stream decoders: bytes in, events out. The built-in formats, and
// the interface a custom format implements (Options::decoder).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nous/http/error.hpp"
#include "nous/http/event.hpp"
#include "nous/http/options.hpp"

namespace nous::http {

/// A sans-I/O decoder: bytes in, events out. Implement it for a custom format.
class Decoder {
  public:
    virtual ~Decoder() = default;
    /// Consumes `bytes` (any split), appending complete events. Sets `done`
    /// when the format's end marker arrived (bytes after it are not consumed).
    /// An error (buffer_overflow, protocol) ends the stream.
    virtual std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out,
                                      bool& done) = 0;
    /// The body ended cleanly (its HTTP framing is complete). SSE discards an
    /// event still missing its blank line (WHATWG); formats whose data is
    /// provably cut (a JSON array without its `]`) report `truncated`.
    virtual std::optional<Error> finish(std::vector<Event>& out) = 0;
};

std::unique_ptr<Decoder> make_sse_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);
std::unique_ptr<Decoder> make_ndjson_decoder(
    std::size_t max_event_bytes = defaults::max_event_bytes);
std::unique_ptr<Decoder> make_json_array_decoder(
    std::size_t max_event_bytes = defaults::max_event_bytes);
/// Raw bytes as events, stopping after an SSE `data: [DONE]` event.
std::unique_ptr<Decoder> make_raw_decoder(std::size_t max_event_bytes = defaults::max_event_bytes);

/// The AWS event stream (application/vnd.amazon.eventstream: Bedrock's
/// converse-stream and the other AWS streaming APIs): one event per message,
/// its type the `:event-type` header ("exception:" + `:exception-type` for an
/// exception, "error:" + `:error-code` for an error), its data the payload.
/// A CRC that does not match, an unknown header type, a header given twice, a
/// message that does not fit, passes 16 MiB or ends early: malformed_stream;
/// one over max_event_bytes: buffer_overflow.
std::unique_ptr<Decoder> make_aws_event_stream_decoder(
    std::size_t max_event_bytes = defaults::max_event_bytes);

/// One AWS event-stream message with string headers (type 7) and `payload`,
/// both CRCs computed: what a server (or a test) sends the decoder above.
std::string encode_aws_event_stream_message(
    const std::vector<std::pair<std::string, std::string>>& string_headers,
    std::string_view payload);

/// The decoder `options` select (custom, else by stream_format).
std::unique_ptr<Decoder> decoder_for(const Options& options);

}  // namespace nous::http
