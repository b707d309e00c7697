// The blocking call of a stream's token path without glibc's cancellation
// point (docs/design/pool.md, "Reads").
//
// glibc's recv() is a POSIX cancellation point: in a process
// with threads each call switches the thread to asynchronous cancellation and
// back, two locked compare-and-swaps on the thread's descriptor. At token
// rates that descriptor's line is cold at every wake-up. The library never
// uses pthread_cancel (a cancel is a CancelToken and a shutdown()), so the
// call goes to the kernel directly. Under a sanitizer they stay glibc's: the
// sanitizers see socket reads through those entry points (ASan checks the
// buffer's bounds, TSan orders a send before the recv that receives it).
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

#include "core/sanitizers.hpp"

namespace nous::http::detail {

/// recv(2): the byte count, or -1 with errno.
inline long socket_recv_call(int fd, void* buffer, std::size_t n, int flags) noexcept {
#ifdef NOUS_SANITIZED
    return ::recv(fd, buffer, n, flags);
#else
    return ::syscall(SYS_recvfrom, fd, buffer, n, flags, nullptr, nullptr);
#endif
}

}  // namespace nous::http::detail
