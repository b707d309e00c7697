#pragma once
// Counters of our own write and read paths: tests count the syscalls a
// request costs (a server-side count cannot fail: loopback coalesces writes).

#include <cstdint>

namespace nous::http::detail {

struct IoCounters {
    std::uint64_t send_calls = 0;  ///< send/sendmsg/SSL_write calls made by our write path
    std::uint64_t recv_calls = 0;  ///< recv/SSL_read calls made by our read path
};
IoCounters io_counters() noexcept;
void count_send() noexcept;
void count_recv() noexcept;

}  // namespace nous::http::detail
