#pragma once
// A cancel target for a raw socket fd: the only safe cross-thread action on a
// socket another thread uses is shutdown(), never close()
// (docs/design/poco-traps.md#cross-thread-cancel).

#include <sys/socket.h>

#include "core/cancel.hpp"

namespace nous::http::detail {

class SocketInterrupt final : public CancelTarget {
  public:
    explicit SocketInterrupt(int fd) noexcept : fd_(fd) {}
    void interrupt() noexcept override { ::shutdown(fd_, SHUT_RDWR); }

  private:
    int fd_;
};

/// A socket registered with a token for the lifetime of this object.
class SocketRegistration {
  public:
    SocketRegistration(const CancelToken* token, int fd)
        : target_(fd), registration_(token, &target_) {}

  private:
    SocketInterrupt target_;
    CancelRegistration registration_;
};

}  // namespace nous::http::detail
