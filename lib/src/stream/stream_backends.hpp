#pragma once
// The built-in stream sources.

#include <memory>

#include "nous/http/backend.hpp"
#include "nous/http/stream.hpp"
#include "stream/stream_request.hpp"

namespace nous::http::detail {

std::unique_ptr<ChunkSource> make_window_source(std::unique_ptr<StreamCall> call, StreamSlot slot);
std::unique_ptr<ChunkSource> make_pull_source(std::unique_ptr<StreamCall> call, StreamSlot slot);

}  // namespace nous::http::detail
