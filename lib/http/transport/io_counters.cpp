// Counters of sends and receives made by our own write and read paths (tests).

#include "transport/io_counters.hpp"

#include <atomic>

namespace nous::http::detail {

namespace {
// Per thread: a test counts the calls its own thread's request makes. A
// process-wide atomic was a locked add on one shared cache line per recv,
// on every stream's thread (the lock also waits for the thread's pending
// stores, at token rates cold ones).
thread_local IoCounters t_counters;
// Counting starts the first time anyone asks: until then a read does not
// touch its thread's counters (a line of thread-local storage that is cold
// at each token's wake-up), only this flag, which no read writes and every
// thread keeps cached.
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_relay_absences{0};
}  // namespace

IoCounters io_counters() noexcept {
    g_counting.store(true, std::memory_order_relaxed);
    return t_counters;
}
void count_send() noexcept {
    if (g_counting.load(std::memory_order_relaxed)) ++t_counters.send_calls;
}
void count_recv() noexcept {
    if (g_counting.load(std::memory_order_relaxed)) ++t_counters.recv_calls;
}
void count_watch_change() noexcept {
    if (g_counting.load(std::memory_order_relaxed)) ++t_counters.watch_changes;
}
std::uint64_t relay_absences() noexcept { return g_relay_absences.load(); }
void count_relay_absence() noexcept { g_relay_absences.fetch_add(1, std::memory_order_relaxed); }

}  // namespace nous::http::detail
