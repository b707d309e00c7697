#pragma once
// A window stream's socket, read by whichever thread is there for its
// bytes: the consumer, waiting in next(), reads it itself in a blocking
// read, one wake-up a token like a thread of its own; while the consumer is
// away the socket is armed in the process's read watch (read_watch.hpp),
// which wakes the reader to read ahead into the window. No descriptor of
// the stream's own. docs/design/backpressure.md#the-read-relay
//
// Every call but signal() and the reader's wait is made holding the
// stream's reading role: the socket's entry in the watch must not change
// once its connection left the stream (another stream may watch the same
// descriptor number next).

#include <atomic>
#include <cstdint>

#include "core/wake_word.hpp"
#include "transport/read_watch.hpp"

namespace nous::http::detail {

class ReadRelay final : WatchTarget {
  public:
    ReadRelay() = default;
    ReadRelay(const ReadRelay&) = delete;
    ReadRelay& operator=(const ReadRelay&) = delete;
    ~ReadRelay() { forget_socket(); }

    /// Puts `socket_fd` in the process's watch, disarmed. False (nothing
    /// held) when there is no watch: the window then runs reader-only.
    bool open(int socket_fd) noexcept;

    /// Before the consumer's blocking read: its bytes wake that read alone.
    void disarm() noexcept;
    /// Given back by a consumer that disarmed it (the reader arms with
    /// arm_for_reader()): the next bytes, or bytes already there, wake the reader.
    void rearm() noexcept {
        if (!armed_) arm_for_reader();
    }
    /// The reader, going to sleep: armed whatever it was (a watch event
    /// that woke the reader disarmed it).
    void arm_for_reader() noexcept;
    /// Takes the socket out of the watch: before its connection leaves the
    /// stream (to the pool, where another stream may watch it).
    void forget_socket() noexcept;

    /// The reader's wait: read the word, arm (under the role), give the
    /// role back, then wait_reader(word). True when the watch saw the
    /// socket readable (bytes, its end or a failure; perhaps taken by the
    /// consumer since), false when signal() (or nothing: look again) woke it.
    std::uint32_t reader_word() const noexcept { return word_.current(); }
    bool wait_reader(std::uint32_t seen) noexcept;
    /// Wakes the reader's wait (the stream's end, a cancel, bytes left in TLS).
    void signal() noexcept;

  private:
    void socket_ready() noexcept override;

    ReadWatch* watch_ = nullptr;
    ReadWatch::Entry entry_;
    bool armed_ = false;  ///< under the role: armed by us, as far as we know
    WakeWord word_;
    std::atomic<bool> socket_fired_{false};
};

}  // namespace nous::http::detail
