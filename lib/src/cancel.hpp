#pragma once
// Cross-thread cancellation. The only safe cross-thread action on a POCO
// socket is ::shutdown(fd, SHUT_RDWR) (poco-1.11.md, "Cancelling from another
// thread"): the token publishes the fd of the call's socket under a mutex, so
// cancel() can shut it down, waking a blocked connect, poll or recv.

#include <atomic>
#include <mutex>

#include "nous/http/options.hpp"

namespace nous::http {

struct CancelToken::State {
    std::atomic<bool> cancelled{false};
    std::mutex mutex;
    int fd = -1;
};

namespace detail {

inline bool is_cancelled(const CancelToken* token) noexcept {
    return token && token->cancelled();
}

/// Publishes `fd` to the token for the lifetime of this object. If the token
/// is already cancelled, the fd is shut down at once.
class FdRegistration {
public:
    FdRegistration(const CancelToken* token, int fd);
    ~FdRegistration();
    FdRegistration(const FdRegistration&) = delete;
    FdRegistration& operator=(const FdRegistration&) = delete;

private:
    const CancelToken* token_;
};

}  // namespace detail
}  // namespace nous::http
