#include "cancel.hpp"

#include <sys/socket.h>

namespace nous::http {

CancelToken::CancelToken() : state_(std::make_unique<State>()) {}
CancelToken::~CancelToken() = default;

void CancelToken::cancel() noexcept {
    state_->cancelled.store(true, std::memory_order_release);
    std::lock_guard lock(state_->mutex);
    if (state_->fd >= 0) ::shutdown(state_->fd, SHUT_RDWR);
}

bool CancelToken::cancelled() const noexcept {
    return state_->cancelled.load(std::memory_order_acquire);
}

namespace detail {

FdRegistration::FdRegistration(const CancelToken* token, int fd) : token_(token) {
    if (!token_) return;
    auto& state = token_->state();
    std::lock_guard lock(state.mutex);
    state.fd = fd;
    if (state.cancelled.load(std::memory_order_acquire)) ::shutdown(fd, SHUT_RDWR);
}

FdRegistration::~FdRegistration() {
    if (!token_) return;
    auto& state = token_->state();
    std::lock_guard lock(state.mutex);
    state.fd = -1;
}

}  // namespace detail
}  // namespace nous::http
