#pragma once
// The stream pipeline's parts: the backend interface stream() runs, and the
// built-in sources.

#include <memory>

#include "core/env.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/stream.hpp"
#include "stream/stream_request.hpp"

namespace nous::http::detail {

/// What stream() runs: the built-in backends, and an application's own
/// (register_stream_backend) adapted to the same pipeline.
class PreparedStreamBackend : public StreamBackend {
  public:
    /// Called directly (not through stream()): reads the environment and config first.
    Stream open(const Request& request, const Options& options) override;
    virtual Stream open_with(const Request& request, const Options& options, const EnvSnapshot& env,
                             const Config& config) = 0;
};

/// Ties a stream to the caller's token (Options::cancel) and to its content
/// deadlines, counted from `start`, for its lifetime (stream/stream.cpp).
Stream watch_call(Stream stream, const Options& options, const Config& config,
                  Clock::time_point start);

/// The decoder `options` select, with the merged event cap.
std::unique_ptr<Decoder> decoder_for(const Options& options, std::size_t max_event_bytes);

/// The built-in sources' data pieces as views, without a ChunkSource::Piece:
/// at token rates a Piece (232 bytes, its error's flag 224 bytes in) built,
/// moved and destroyed at every read was cold lines of its own.
class ViewSource {
  public:
    /// Blocks as ChunkSource::next(). True: the next piece is data, `out` a
    /// view of the source's own bytes, valid until its next next_data_view()
    /// or next(). False: the next piece is something else (the end, a
    /// failure, the stream not opened yet), which next() returns.
    virtual bool next_data_view(std::string_view& out) = 0;

  protected:
    ~ViewSource() = default;
};

std::unique_ptr<ChunkSource> make_window_source(std::unique_ptr<StreamCall> call, StreamSlot slot);
std::unique_ptr<ChunkSource> make_pull_source(std::unique_ptr<StreamCall> call, StreamSlot slot);

}  // namespace nous::http::detail
