// The read relay: two epoll instances on one socket, registered with
// EPOLLEXCLUSIVE, the consumer's first.
//
// Why one of them wakes: a socket's arriving bytes call its wait entries in
// the order they were added, and an exclusive entry whose epoll instance has
// a thread waiting ends the walk; an instance without one only notes the
// event and lets the walk go on. So a waiting consumer is woken alone, and
// the reader is woken only when the consumer is not waiting. A shutdown()
// (a cancel) wakes every entry. Level-triggered: an instance re-reports a
// socket that is still readable, but only the instance the event reached.

#include "transport/read_relay.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "transport/plain_syscalls.hpp"

namespace nous::http::detail {

namespace {

constexpr std::uint32_t kSocketTag = 1, kSignalTag = 2;

/// Whether `reserve` descriptors stay free above `fd` under the process's
/// limit: the relay's three descriptors a stream must not cost a later
/// stream its socket.
bool leaves_free(int fd, std::size_t reserve) noexcept {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
    if (limit.rlim_cur == RLIM_INFINITY) return true;
    return static_cast<rlim_t>(fd) + reserve < limit.rlim_cur;
}

bool add(int epoll_fd, int fd, std::uint32_t events, std::uint32_t tag) noexcept {
    epoll_event event{};
    event.events = events;
    event.data.u32 = tag;
    return ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0;
}

}  // namespace

ReadRelay::~ReadRelay() { close_all(); }

bool ReadRelay::open(int socket_fd, std::size_t reserve) noexcept {
    if (socket_fd < 0) return false;
    consumer_epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    reader_epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    signal_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    socket_fd_ = socket_fd;
    // The consumer's entry goes first: the kernel walks the socket's entries
    // in the order they were added. The signal is edge-triggered: it is
    // never read, each write is one event for each instance.
    const bool ok = consumer_epoll_ >= 0 && reader_epoll_ >= 0 && signal_fd_ >= 0 &&
                    leaves_free(std::max({consumer_epoll_, reader_epoll_, signal_fd_}), reserve) &&
                    add(consumer_epoll_, socket_fd, EPOLLIN | EPOLLEXCLUSIVE, kSocketTag) &&
                    add(reader_epoll_, socket_fd, EPOLLIN | EPOLLEXCLUSIVE, kSocketTag) &&
                    add(consumer_epoll_, signal_fd_, EPOLLIN | EPOLLET, kSignalTag) &&
                    add(reader_epoll_, signal_fd_, EPOLLIN | EPOLLET, kSignalTag);
    if (!ok) close_all();
    return ok;
}

ReadRelay::Woken ReadRelay::wait(int epoll_fd, int timeout_ms) noexcept {
    epoll_event events[2];
    const int n = epoll_wait_call(epoll_fd, events, 2, timeout_ms);
    if (n == 0) return Woken::timeout;
    if (n < 0) return Woken::signal;  // EINTR: the caller looks again
    for (int i = 0; i < n; ++i)
        if (events[i].data.u32 == kSocketTag) return Woken::socket;
    return Woken::signal;
}

void ReadRelay::signal() noexcept {
    if (signal_fd_ < 0) return;
    const std::uint64_t one = 1;
    // EAGAIN only at a counter near 2^64: the event is pending then anyway.
    [[maybe_unused]] const auto written = ::write(signal_fd_, &one, sizeof one);
}

void ReadRelay::forget_socket() noexcept {
    if (socket_fd_ < 0) return;
    ::epoll_ctl(consumer_epoll_, EPOLL_CTL_DEL, socket_fd_, nullptr);
    ::epoll_ctl(reader_epoll_, EPOLL_CTL_DEL, socket_fd_, nullptr);
    socket_fd_ = -1;
}

void ReadRelay::close_all() noexcept {
    for (int* fd : {&consumer_epoll_, &reader_epoll_, &signal_fd_})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
    socket_fd_ = -1;
}

}  // namespace nous::http::detail
