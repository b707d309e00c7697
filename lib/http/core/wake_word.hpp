// A thread's wake-up without a mutex: a 32-bit word the waker bumps, and a
// futex on it. The waiter sleeps only while the word is unchanged (FUTEX_WAIT
// compares it in the kernel), and the waker makes the wake system call only
// when a waiter said it is waiting: one futex call on each side when the
// waiter sleeps, none when it does not. (std::atomic::wait would do the
// same after spinning with sched_yield calls, which cost more than they save
// at token rates; a condition variable adds its mutex, which the woken
// thread must take again: two futex calls more when it is contended.)
//
// The protocol, both sides sequentially consistent:
//   waiter: seen = current(); announce; look at the state; wait(seen) if not ready
//   waker:  change the state; bump(); if announced: wake()
// Either the waiter sees the state changed, or the waker sees the
// announcement; a bump between the waiter's look and its sleep makes the
// futex return at once.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace nous::http::detail {

class WakeWord {
  public:
    std::uint32_t current() const noexcept { return word_.load(std::memory_order_seq_cst); }
    /// Sleeps while the word is `seen`, with no timer at all: for a waiter
    /// whose every cause to wake bumps the word (the protocol above).
    void wait_unbounded(std::uint32_t seen) noexcept {
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen,
                  nullptr, nullptr, 0);
    }
    /// Changes the word: a wait on the old value returns at once.
    void bump() noexcept { word_.fetch_add(1, std::memory_order_seq_cst); }
    /// Wakes one thread sleeping on the word.
    void wake() noexcept { wake_up_to(1); }
    /// Wakes every thread sleeping on the word.
    void wake_all() noexcept { wake_up_to(INT_MAX); }

  private:
    void wake_up_to(int count) noexcept {
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, count,
                  nullptr, nullptr, 0);
    }

    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace nous::http::detail
