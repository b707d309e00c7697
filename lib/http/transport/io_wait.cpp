// Waiting on a socket under a call's deadlines.

#include "transport/io_wait.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace nous::http::detail {

IoStatus wait_fd(int fd, short events, const Deadlines& deadlines, Clock::time_point idle_limit) {
    Clock::time_point limit = std::min(idle_limit, deadlines.total_by);
    for (;;) {
        pollfd p{fd, events, 0};
        int rc = ::poll(&p, 1, millis_until(limit));
        if (rc > 0) return IoStatus::ok;
        if (rc == 0) {
            const Expiry expiry = deadlines.expired(limit);
            if (expiry == Expiry::not_yet) continue;  // poll rounds down: wait the rest
            return timeout_status(expiry);
        }
        if (errno != EINTR) return IoStatus::failed;
    }
}

}  // namespace nous::http::detail
