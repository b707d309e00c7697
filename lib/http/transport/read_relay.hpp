#pragma once
// A window stream's two waits on its socket, of which the kernel wakes one:
// the consumer's while it waits in next(), else the reader thread's. A
// consumer that keeps up reads its bytes itself, one wake-up a token like
// a thread of its own; a consumer away lets the reader read ahead into the
// window. docs/design/backpressure.md#the-read-relay

#include <cstddef>

namespace nous::http::detail {

class ReadRelay {
  public:
    ReadRelay() = default;
    ReadRelay(const ReadRelay&) = delete;
    ReadRelay& operator=(const ReadRelay&) = delete;
    ~ReadRelay();

    /// Sets up the two waits on `socket_fd`. False (nothing held) when the
    /// descriptors cannot be had, or would leave fewer than `reserve` free
    /// below the process's descriptor limit (room for the sockets of the
    /// streams still to come): the window then runs without the relay.
    bool open(int socket_fd, std::size_t reserve) noexcept;
    bool active() const noexcept { return consumer_epoll_ >= 0; }

    enum class Woken {
        socket,  ///< the socket is readable (or at its end, or failed)
        signal,  ///< signal() was called (or an interrupted wait): look at the state again
        timeout,
    };
    /// The consumer's wait: `timeout_ms` at most (-1: none).
    Woken wait_consumer(int timeout_ms) noexcept { return wait(consumer_epoll_, timeout_ms); }
    /// The reader's wait: `timeout_ms` at most (-1: none); it keeps the
    /// deadline of a consumer waiting without a timeout of its own.
    Woken wait_reader(int timeout_ms) noexcept { return wait(reader_epoll_, timeout_ms); }
    /// Wakes both waits (the one that waits now, and the next one once).
    void signal() noexcept;
    /// Takes the socket out of both waits: before its connection leaves the
    /// stream (back to the pool, where another stream waits on it).
    void forget_socket() noexcept;

  private:
    Woken wait(int epoll_fd, int timeout_ms) noexcept;
    void close_all() noexcept;

    int consumer_epoll_ = -1, reader_epoll_ = -1, signal_fd_ = -1, socket_fd_ = -1;
};

}  // namespace nous::http::detail
