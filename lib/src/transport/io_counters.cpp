// Counters of sends and receives made by our own write and read paths (tests).

#include "transport/io_counters.hpp"

namespace nous::http::detail {

namespace {
// Per thread: a test counts the calls its own thread's request makes. A
// process-wide atomic was a locked add on one shared cache line per recv,
// on every stream's thread (the lock also waits for the thread's pending
// stores, at token rates cold ones).
thread_local IoCounters t_counters;
}  // namespace

IoCounters io_counters() noexcept { return t_counters; }
void count_send() noexcept { ++t_counters.send_calls; }
void count_recv() noexcept { ++t_counters.recv_calls; }

}  // namespace nous::http::detail
