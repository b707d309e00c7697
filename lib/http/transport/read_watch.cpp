// The process's read watch (read_watch.hpp): one epoll instance, one
// thread, a table of the streams' targets.
//
// Why a key and not a pointer in the epoll event: the watch's thread may
// hold a batch of events while a stream ends and frees its target. Each
// event carries its slot and the slot's generation; the thread looks them
// up under the table's lock, and remove() bumps the generation under the
// same lock, so an event of an ended stream finds nothing. The checks a
// consumer books as it goes away (check_later) carry the same key.

#include "transport/read_watch.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/limits.hpp"
#include "core/log.hpp"
#include "transport/io_counters.hpp"

namespace nous::http::detail {

namespace {

/// The watch's thread blocks in epoll_wait and touches a few lines: a
/// small stack (sanitizer builds keep the default: their frames are larger).
constexpr std::size_t kWatchStackBytes = 64 * 1024;
constexpr int kBatch = 64;

std::mutex g_start_mutex;      ///< held while the watch starts, and across fork()
ReadWatch* g_watch = nullptr;  ///< guarded by g_start_mutex; never destroyed
bool g_failed = false;         ///< guarded by g_start_mutex: told once, not retried

constexpr std::uint64_t key_of(std::uint32_t slot, std::uint32_t generation) noexcept {
    return (static_cast<std::uint64_t>(generation) << 32) | slot;
}

/// The wake eventfd's key: slot 2^32 - 1 is never reached.
constexpr std::uint64_t kWakeKey = ~std::uint64_t{0};

bool control(int epoll_fd, int op, const ReadWatch::Entry& entry, std::uint32_t events) noexcept {
    epoll_event event{};
    event.events = events;
    event.data.u64 = entry.key;
    return ::epoll_ctl(epoll_fd, op, entry.fd, &event) == 0;
}

}  // namespace

ReadWatch* ReadWatch::get() noexcept {
    static const bool forgotten_in_children = [] {
        // A child of fork() has no watch thread: it starts its own watch
        // (the parent's, with the streams it served, is left behind).
        return ::pthread_atfork([] { g_start_mutex.lock(); }, [] { g_start_mutex.unlock(); },
                                [] {
                                    if (g_watch) {
                                        ::close(g_watch->epoll_fd_);
                                        ::close(g_watch->wake_fd_);
                                    }
                                    g_watch = nullptr;
                                    g_failed = false;
                                    g_start_mutex.unlock();
                                }) == 0;
    }();
    (void)forgotten_in_children;
    std::lock_guard lock(g_start_mutex);
    if (g_watch || g_failed) return g_watch;
    const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    const int wake_fd = epoll_fd < 0 ? -1 : ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event wake_event{};
    wake_event.events = EPOLLIN;
    wake_event.data.u64 = kWakeKey;
    if (wake_fd < 0 || ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &wake_event) != 0) {
        const int refused = errno;
        if (epoll_fd >= 0) ::close(epoll_fd);
        if (wake_fd >= 0) ::close(wake_fd);
        g_failed = true;
        log(LogLevel::info, std::string("window streams run reader-only (two wake-ups a token): "
                                        "no descriptor for the read watch: ") +
                                std::strerror(refused));
        return nullptr;
    }
    auto* watch = new ReadWatch(epoll_fd, wake_fd);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
#ifndef NOUS_SANITIZED
    pthread_attr_setstacksize(&attributes, kWatchStackBytes);
#endif
    // Every signal blocked on the watch's thread: the application's
    // handlers run on its own threads.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    pthread_t thread;
    const int failed = pthread_create(
        &thread, &attributes,
        [](void* self) -> void* {
            static_cast<ReadWatch*>(self)->watch();
            return nullptr;
        },
        watch);
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    pthread_attr_destroy(&attributes);
    if (failed) {
        ::close(epoll_fd);
        ::close(wake_fd);
        delete watch;
        g_failed = true;
        log(LogLevel::info, std::string("window streams run reader-only (two wake-ups a token): "
                                        "no thread for the read watch: ") +
                                std::strerror(failed));
        return nullptr;
    }
    g_watch = watch;
    return g_watch;
}

bool ReadWatch::add(int fd, WatchTarget& target, Entry& entry) noexcept {
    std::uint32_t slot;
    {
        std::lock_guard lock(table_mutex_);
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            try {
                slots_.emplace_back();
            } catch (...) {
                return false;
            }
            slot = static_cast<std::uint32_t>(slots_.size() - 1);
        }
        slots_[slot].target = &target;
        entry.fd = fd;
        entry.key = key_of(slot, slots_[slot].generation);
    }
    // EPOLLONESHOT alone: in the watch, disarmed (no event reported).
    if (control(epoll_fd_, EPOLL_CTL_ADD, entry, EPOLLONESHOT)) return true;
    const int refused = errno;  // the caller says why; the slot's removal may set errno
    remove(entry);
    errno = refused;
    return false;
}

void ReadWatch::arm(const Entry& entry) noexcept {
    count_watch_change();
    // EPOLLRDHUP as well: a peer's close wakes the reader too.
    control(epoll_fd_, EPOLL_CTL_MOD, entry, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT);
}

void ReadWatch::disarm(const Entry& entry) noexcept {
    count_watch_change();
    control(epoll_fd_, EPOLL_CTL_MOD, entry, EPOLLONESHOT);
}

void ReadWatch::remove(Entry& entry) noexcept {
    if (entry.fd < 0) return;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, entry.fd, nullptr);
    const auto slot = static_cast<std::uint32_t>(entry.key);
    std::lock_guard lock(table_mutex_);
    slots_[slot].target = nullptr;
    ++slots_[slot].generation;
    try {
        free_.push_back(slot);
    } catch (...) {
        // Out of memory: the slot is not reused, nothing else is lost.
    }
    entry.fd = -1;
}

namespace {

using Clock = std::chrono::steady_clock;

/// A check booked at `now` comes due on the first step of the delay's grid
/// at least the delay ahead: checks booked within one step come due
/// together, and the watch's thread wakes once for them.
Clock::time_point due_on_grid(Clock::time_point now) noexcept {
    constexpr Clock::duration step = limits::relay_arm_delay;
    const Clock::duration earliest = (now + step).time_since_epoch();
    return Clock::time_point((earliest + step - Clock::duration(1)) / step * step);
}

}  // namespace

bool ReadWatch::check_later(const Entry& entry, std::uint32_t visit) noexcept {
    bool wake;
    {
        std::lock_guard lock(booked_mutex_);
        try {
            booked_.push_back(Check{entry.key, visit, due_on_grid(Clock::now())});
        } catch (...) {
            return false;
        }
        wake = sleeps_for_good_;
        sleeps_for_good_ = false;
    }
    if (wake) {
        const std::uint64_t one = 1;
        // Full (never, at 2^64 - 2): the watch has a wake-up pending anyway.
        [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
    }
    return true;
}

int ReadWatch::take_booked_checks() noexcept {
    std::lock_guard lock(booked_mutex_);
    try {
        checks_.insert(checks_.end(), booked_.begin(), booked_.end());
        booked_.clear();
    } catch (...) {
        // Out of memory: the checks stay booked, taken in at the next turn.
    }
    if (checks_head_ == checks_.size()) {
        sleeps_for_good_ = booked_.empty();
        return sleeps_for_good_ ? -1 : 1;
    }
    const auto wait =
        std::chrono::ceil<std::chrono::milliseconds>(checks_[checks_head_].due - Clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(wait.count(), 0));
}

void ReadWatch::make_due_checks() noexcept {
    const Clock::time_point now = Clock::now();
    for (; checks_head_ < checks_.size() && checks_[checks_head_].due <= now; ++checks_head_) {
        const Check& check = checks_[checks_head_];
        if (WatchTarget* target = target_of(check.key)) target->check_due(check.visit);
    }
    // The checks made leave the front once they are half the vector (all
    // of it once every check is made).
    if (checks_head_ > 0 && checks_head_ * 2 >= checks_.size()) {
        checks_.erase(checks_.begin(), checks_.begin() + static_cast<std::ptrdiff_t>(checks_head_));
        checks_head_ = 0;
    }
}

void ReadWatch::watch() noexcept {
    epoll_event ready[kBatch];
    for (;;) {
        const int timeout = take_booked_checks();
        const int n = ::epoll_wait(epoll_fd_, ready, kBatch, timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            // Only a closed instance (a fork's child closed its copy, which
            // is never this thread's process): nothing to watch.
            return;
        }
        std::lock_guard lock(table_mutex_);
        for (int i = 0; i < n; ++i) {
            const std::uint64_t key = ready[i].data.u64;
            if (key == kWakeKey) {
                std::uint64_t count;
                [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &count, sizeof count);
                continue;
            }
            if (WatchTarget* target = target_of(key)) target->socket_ready();
        }
        make_due_checks();
    }
}

WatchTarget* ReadWatch::target_of(std::uint64_t key) const noexcept {
    const auto slot = static_cast<std::uint32_t>(key);
    if (slot >= slots_.size() || key_of(slot, slots_[slot].generation) != key) return nullptr;
    return slots_[slot].target;
}

}  // namespace nous::http::detail
