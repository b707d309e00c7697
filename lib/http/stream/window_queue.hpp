#pragma once
// The window source's queue slot and the spare storage ring it recycles
// piece storage through (nous_http internal; stream/window_source.hpp).

#include <concurrentqueue/concurrentqueue.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "stream/stream_backends.hpp"

namespace nous::http::detail {

using Piece = ChunkSource::Piece;

/// The queue's shape: at token rates it holds one piece at a time, so
/// small blocks (a fast reader ahead of a slow consumer takes more of them,
/// kept until the stream ends: docs/design/poco-traps.md#queue-memory), and
/// no implicit producers (the reader enqueues through its token): moodycamel's
/// defaults (32-slot blocks, a 32-entry producer hash in the queue, 32-entry
/// block indexes) were ~4 KB resident a stream for one piece in flight.
struct WindowQueueTraits : moodycamel::ConcurrentQueueDefaultTraits {
    static const std::size_t BLOCK_SIZE = 8;
    static const std::size_t EXPLICIT_INITIAL_INDEX_SIZE = 8;
    static const std::size_t INITIAL_IMPLICIT_PRODUCER_HASH_SIZE = 0;
};

/// What the queue holds: a Piece with its (rare, once per stream at most)
/// error out of line. A Piece carries an optional Error inline, ~220 bytes a
/// slot; the queue's first block is touched, and so resident, for the
/// stream's whole life: a block of 8 is 384 bytes of Slots.
struct Slot {
    Piece::Kind kind = Piece::Kind::end;
    std::string bytes;
    std::unique_ptr<Error> error;

    static Slot of(Piece&& piece) {
        Slot s;
        s.kind = piece.kind;
        s.bytes = std::move(piece.bytes);
        if (piece.error) s.error = std::make_unique<Error>(std::move(*piece.error));
        return s;
    }
    Piece into_piece() && {
        Piece p;
        p.kind = kind;
        p.bytes = std::move(bytes);
        if (error) p.error = std::move(*error);
        return p;
    }
};

/// Piece storage the consumer gives back for the reader to read into next:
/// one writer (the consumer, in recycle()) and one reader (the reader
/// thread), a ring of a few strings with two counters. A full ring drops the
/// storage; an empty one makes the reader allocate.
class SpareRing {
  public:
    /// Consumer side.
    void give(std::string&& bytes) noexcept {
        const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
        if (tail - head_.load(std::memory_order_acquire) == kSlots) return;  // full
        slots_[tail % kSlots] = std::move(bytes);
        tail_.store(tail + 1, std::memory_order_release);
    }
    /// Reader side: storage into `out` when there is some.
    void take(std::string& out) noexcept {
        const std::uint32_t head = head_.load(std::memory_order_relaxed);
        if (head == tail_.load(std::memory_order_acquire)) return;  // empty
        out = std::move(slots_[head % kSlots]);
        head_.store(head + 1, std::memory_order_release);
    }

  private:
    // A few spare buffers cover the pieces in flight between the two
    // threads; more would only hold memory.
    static constexpr std::uint32_t kSlots = 4;
    std::string slots_[kSlots];
    std::atomic<std::uint32_t> head_{0}, tail_{0};
};

}  // namespace nous::http::detail
