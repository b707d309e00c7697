#pragma once
// A window stream's socket, read by whichever thread is there for its
// bytes: the consumer, waiting in next(), reads it itself in a blocking
// read, one wake-up a token like a thread of its own; once the consumer has
// been away for limits::relay_arm_delay the socket is armed in the
// process's read watch (read_watch.hpp), which wakes the reader to read
// ahead into the window. No descriptor of the stream's own.
// docs/design/backpressure.md#the-read-relay
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

    /// The consumer, back for bytes (before disarm()): a check of its
    /// last absence finds it back. Its thread only.
    void consumer_back() noexcept {
        visits_.store(visits_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    /// Before the consumer's blocking read: its bytes wake that read alone.
    void disarm() noexcept;
    /// The consumer going away, the socket disarmed (by it, or by a watch
    /// event): if the consumer is still away after limits::relay_arm_delay,
    /// the reader is woken to arm it (and reads ahead once bytes come). A
    /// consumer back sooner finds the socket as it left it: no epoll_ctl.
    void consumer_away() noexcept;
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
    void check_due(std::uint32_t visit) noexcept override;

    ReadWatch* watch_ = nullptr;
    ReadWatch::Entry entry_;
    bool armed_ = false;  ///< under the role: armed by us, as far as we know
    WakeWord word_;
    std::atomic<bool> socket_fired_{false};
    /// The consumer's comings and goings: a check booked as it left finds
    /// the count changed if it has come back since.
    std::atomic<std::uint32_t> visits_{0};
};

}  // namespace nous::http::detail
