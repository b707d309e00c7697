// A stream's reader thread, taken from a process-wide set of idle readers
// when one is there, else started with a stack sized for what a reader runs
// (limits::reader_stack_bytes). A reader whose stream ended waits for the
// next stream's body for limits::reader_idle_expiry, then exits: a server
// whose streams come and go pays a thread's start and end (a clone, a stack,
// its first page faults, its exit and join: ~300 us of CPU a stream on a
// virtual machine, docs/BENCHMARKS.md) once, not once a stream.
// docs/design/backpressure.md "The reader thread".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace nous::http::detail {

struct ReaderWorker;

class ReaderThread {
  public:
    ReaderThread() = default;
    ReaderThread(const ReaderThread&) = delete;
    ReaderThread& operator=(const ReaderThread&) = delete;
    /// Joined by its owner (join()) before it is destroyed, as a std::thread.
    ~ReaderThread() = default;

    /// Runs `body` on an idle reader, or on a new thread. Throws
    /// std::system_error when no thread can be had (EAGAIN), as std::thread
    /// does.
    void start(std::function<void()> body);

    /// Returns once `body` has returned; the thread waits for the next
    /// stream from here (it touches nothing of this stream's after).
    void join() noexcept;

  private:
    ReaderWorker* worker_ = nullptr;
    std::uint64_t job_ = 0;  ///< the worker's job number for this body
};

/// Gives the calling reader's stack pages below the caller's frame back to
/// the kernel (they read as zeros if touched again). A stream's reader goes
/// deepest in its connect and its head, and every page a thread touched stays
/// resident for as long as the thread lives: called after the head, the
/// connect's pages are not paid for the stream's whole life. A no-op off a
/// reader thread and in sanitizer builds. docs/design/backpressure.md "The
/// memory bound per stream".
void release_reader_stack_below_caller() noexcept;

/// What the readers did so far, for tests and benchmarks.
struct ReaderCounts {
    std::uint64_t threads_started = 0;  ///< threads created for readers
    std::uint64_t bodies_run = 0;       ///< stream bodies handed to a reader
    std::size_t idle = 0;               ///< readers waiting for a stream now
};
ReaderCounts reader_counts() noexcept;

/// How long an idle reader waits for a stream before it exits, from its
/// next wait on (limits::reader_idle_expiry unless set; tests shorten it).
void set_reader_idle_expiry(std::chrono::milliseconds expiry) noexcept;

}  // namespace nous::http::detail
