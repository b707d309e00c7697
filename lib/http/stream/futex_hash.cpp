// The process's futex hash, grown with the window's threads (futex_hash.hpp).

#include "stream/futex_hash.hpp"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/log.hpp"

namespace nous::http::detail {

namespace {

// <linux/prctl.h> of Linux 6.16; Debian 12's headers predate it.
constexpr int kPrFutexHash = 78;
constexpr unsigned long kSetSlots = 1, kGetSlots = 2;
/// The kernel's bounds on a private hash (kernel/futex/core.c).
constexpr std::size_t kMinSlots = 16, kMaxSlots = 131072;
/// Four buckets a sleeping thread: a wake walks about one entry.
constexpr std::size_t kSlotsPerThread = 4;

/// The size last asked for: a hash just set may not be in use yet (the
/// kernel switches when the old one's last user lets go) and reads as the
/// old size. A child of fork() starts with no private hash of its own, and
/// forgets it (the handler registered at the first growth).
std::atomic<std::size_t> g_set_before{0};

/// Threads a hash of `slots` buckets has room for; SIZE_MAX at the
/// kernel's bound (it can grow no more).
std::size_t room_in(std::size_t slots) noexcept {
    return slots >= kMaxSlots ? SIZE_MAX : slots / kSlotsPerThread;
}

}  // namespace

std::size_t futex_hash_slots_for(std::size_t threads) noexcept {
    if (threads >= kMaxSlots / kSlotsPerThread) return kMaxSlots;
    return std::max(kMinSlots, std::bit_ceil(threads * kSlotsPerThread));
}

std::size_t make_futex_hash_room(std::size_t threads) noexcept {
    const int current = ::prctl(kPrFutexHash, kGetSlots, 0, 0, 0);
    // -1: a kernel without PR_FUTEX_HASH; 0: the global hash (the kernel's
    // default before 6.16, or the application's choice), sized by the CPUs
    // at boot and shared with every process: not ours to change.
    if (current <= 0) return SIZE_MAX;
    static const bool forgotten_in_children =
        ::pthread_atfork(nullptr, nullptr, [] { g_set_before.store(0); }) == 0;
    (void)forgotten_in_children;
    const std::size_t have = std::max(static_cast<std::size_t>(current), g_set_before.load());
    const std::size_t wanted = futex_hash_slots_for(threads);
    if (have >= wanted) return room_in(have);
    if (::prctl(kPrFutexHash, kSetSlots, static_cast<unsigned long>(wanted), 0, 0) != 0) {
        // Refused (an immutable hash, memory): the streams still work, each
        // wake-up dearer; said once.
        static std::atomic<bool> told{false};
        if (!told.exchange(true))
            log(LogLevel::info, "could not grow the futex hash to " + std::to_string(wanted) +
                                    " buckets (" + std::strerror(errno) +
                                    "): wake-ups cost more with many window streams");
        return SIZE_MAX;
    }
    g_set_before.store(wanted);
    return room_in(wanted);
}

}  // namespace nous::http::detail
