// Room in the process's futex hash for the threads the window backend puts
// to sleep on futexes (docs/design/backpressure.md, "The futex hash").
//
// From Linux 6.16 a process's private futexes hash into a table of its own,
// sized when its threads start by the CPUs, not by the threads: 16 buckets
// on a 2-CPU machine, however many threads sleep there. A futex wake walks
// its bucket, so with thousands of window streams (a reader thread each, and
// consumers asleep on a wake word) every wake-up walked hundreds of sleepers:
// `perf` put 30% of the CPU of 10,000 streams in `futex_wake` alone.
#pragma once

#include <cstddef>

namespace nous::http::detail {

/// The bucket count that gives `threads` sleepers room: four buckets a
/// thread, a power of two, within the kernel's bounds.
std::size_t futex_hash_slots_for(std::size_t threads) noexcept;

/// Grows the process's private futex hash (PR_FUTEX_HASH) to room for
/// `threads`, never shrinks it. Returns how many threads the hash now has
/// room for; SIZE_MAX when there is nothing to grow (a kernel without a
/// private hash, before 6.16, or a process that chose the global one), so
/// that the caller asks no more.
std::size_t make_futex_hash_room(std::size_t threads) noexcept;

}  // namespace nous::http::detail
