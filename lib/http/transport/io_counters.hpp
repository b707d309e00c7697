#pragma once
// Counters of our own write and read paths: tests count the syscalls a
// request costs (a server-side count cannot fail: loopback coalesces writes).
// Per thread: the calls made on the calling thread (a pooled or curl post's
// I/O runs there; a window stream's reads run on its reader thread).

#include <cstdint>

namespace nous::http::detail {

struct IoCounters {
    std::uint64_t send_calls = 0;     ///< send/sendmsg/SSL_write calls made by our write path
    std::uint64_t recv_calls = 0;     ///< recv/SSL_read calls made by our read path
    std::uint64_t watch_changes = 0;  ///< a socket armed or disarmed in the read watch
};
/// The calling thread's counts. The first call starts the counting (of every thread):
/// a test takes its "before" snapshot with it.
IoCounters io_counters() noexcept;
void count_send() noexcept;
void count_recv() noexcept;
void count_watch_change() noexcept;
/// Process-wide: the times a read relay's consumer was found away when its
/// check came due, and its reader was woken to read ahead (rare by design).
std::uint64_t relay_absences() noexcept;
void count_relay_absence() noexcept;

}  // namespace nous::http::detail
