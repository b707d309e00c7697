// The read relay (read_relay.hpp) on the process's read watch.
//
// Why a consumer asleep in its read is woken alone: its socket is disarmed
// in the watch first, and a disarmed EPOLLONESHOT entry wakes nobody
// (the kernel's callback returns at once). The consumer leaving does not
// arm it: it books a check in the watch, and a consumer still away when the
// check comes due has its reader woken, which arms the socket; its next
// bytes (or bytes already there: arming looks) wake the watch's thread,
// which wakes the reader again to read them. A consumer that keeps up is
// back long before: the socket stays disarmed, and a token costs no epoll_ctl.

#include "transport/read_relay.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "core/log.hpp"
#include "transport/io_counters.hpp"

namespace nous::http::detail {

bool ReadRelay::open(int socket_fd) noexcept {
    if (socket_fd < 0) return false;
    ReadWatch* watch = ReadWatch::get();
    if (!watch) return false;  // said once, by ReadWatch::get()
    if (!watch->add(socket_fd, *this, entry_)) {
        // epoll refused the socket (fs.epoll.max_user_watches, memory):
        // this stream runs reader-only, still correct.
        static std::atomic<bool> told{false};
        if (!told.exchange(true))
            log(LogLevel::info, std::string("a window stream runs reader-only: the read watch "
                                            "refused its socket: ") +
                                    std::strerror(errno));
        return false;
    }
    watch_ = watch;
    armed_ = false;
    return true;
}

void ReadRelay::disarm() noexcept {
    if (!armed_ || entry_.fd < 0) return;
    watch_->disarm(entry_);
    armed_ = false;
}

void ReadRelay::consumer_away() noexcept {
    if (armed_ || entry_.fd < 0) return;  // the reader armed it: its bytes wake the reader
    const std::uint32_t visit = visits_.load(std::memory_order_relaxed) + 1;
    visits_.store(visit, std::memory_order_release);
    // No memory for the check: armed now, as every departure once was.
    if (!watch_->check_later(entry_, visit)) arm_for_reader();
}

void ReadRelay::arm_for_reader() noexcept {
    if (entry_.fd < 0) return;
    watch_->arm(entry_);
    armed_ = true;
}

void ReadRelay::forget_socket() noexcept {
    if (entry_.fd < 0) return;
    watch_->remove(entry_);
    armed_ = false;
}

bool ReadRelay::wait_reader(std::uint32_t seen) noexcept {
    word_.wait_unbounded(seen);
    return socket_fired_.exchange(false);
}

void ReadRelay::signal() noexcept {
    word_.bump();
    word_.wake();
}

void ReadRelay::check_due(std::uint32_t visit) noexcept {
    // Away since the check was booked: the reader wakes with no socket
    // event, looks, and arms the socket (the consumer may be back by
    // then: the reader then waits for the role, and arms it once more).
    if (visits_.load(std::memory_order_acquire) != visit) return;
    count_relay_absence();
    signal();
}

void ReadRelay::socket_ready() noexcept {
    socket_fired_.store(true);
    signal();
}

}  // namespace nous::http::detail
