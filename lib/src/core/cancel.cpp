// Cancel tokens: the flag and the targets a cancel interrupts.

#include "core/cancel.hpp"

#include <algorithm>

namespace nous::http {

CancelToken::CancelToken() : state_(std::make_unique<State>()) {}
CancelToken::~CancelToken() = default;

void CancelToken::cancel() noexcept {
    state_->cancelled.store(true, std::memory_order_release);
    std::lock_guard lock(state_->mutex);
    for (detail::CancelTarget* target : state_->targets) target->interrupt();
}

bool CancelToken::cancelled() const noexcept {
    return state_->cancelled.load(std::memory_order_acquire);
}

namespace detail {

CancelRegistration::CancelRegistration(const CancelToken* token, CancelTarget* target)
    : token_(token), target_(target) {
    if (!token_ || !target_) return;
    auto& state = CancelAccess::state(*token_);
    std::lock_guard lock(state.mutex);
    state.targets.push_back(target_);
    if (state.cancelled.load(std::memory_order_acquire)) target_->interrupt();
}

CancelRegistration::~CancelRegistration() {
    if (!token_ || !target_) return;
    auto& state = CancelAccess::state(*token_);
    std::lock_guard lock(state.mutex);
    auto it = std::find(state.targets.begin(), state.targets.end(), target_);
    if (it != state.targets.end()) state.targets.erase(it);
}

}  // namespace detail
}  // namespace nous::http
