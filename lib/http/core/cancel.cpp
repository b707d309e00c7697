// Cancel tokens: the flag and the targets a cancel interrupts.

#include "core/cancel.hpp"

#include <algorithm>

namespace nous::http {

CancelToken::CancelToken() : state_(std::make_unique<State>()) {}
CancelToken::~CancelToken() = default;

void CancelToken::cancel() noexcept {
    cancelled_.store(true, std::memory_order_release);
    std::lock_guard lock(state_->mutex);
    for (detail::CancelTarget* target : state_->targets) target->interrupt();
}

namespace detail {

CancelRegistration::CancelRegistration(const CancelToken* token, CancelTarget* target)
    : token_(token), target_(target) {
    if (!token_ || !target_) return;
    auto& state = CancelAccess::state(*token_);
    std::lock_guard lock(state.mutex);
    state.targets.push_back(target_);
    if (token_->cancelled()) target_->interrupt();
}

CancelRegistration::~CancelRegistration() {
    if (!token_ || !target_) return;
    auto& state = CancelAccess::state(*token_);
    std::lock_guard lock(state.mutex);
    auto it = std::find(state.targets.begin(), state.targets.end(), target_);
    if (it != state.targets.end()) state.targets.erase(it);
}

}  // namespace detail

namespace {

/// A cancel notifies the waiters under their mutex, so a waiter between its
/// look at the token and its wait sees it (CancelWakeup's contract).
class NotifyOnCancel final : public detail::CancelTarget {
  public:
    NotifyOnCancel(std::mutex& mutex, std::condition_variable& waiters)
        : mutex_(mutex), waiters_(waiters) {}
    void interrupt() noexcept override {
        std::lock_guard lock(mutex_);
        waiters_.notify_all();
    }

  private:
    std::mutex& mutex_;
    std::condition_variable& waiters_;
};

}  // namespace

struct CancelWakeup::Registration {
    Registration(const CancelToken* token, std::mutex& mutex, std::condition_variable& waiters)
        : notify(mutex, waiters), registration(token, &notify) {}
    NotifyOnCancel notify;
    detail::CancelRegistration registration;  ///< after `notify`: it goes first
};

CancelWakeup::CancelWakeup(const CancelToken* token, std::mutex& mutex,
                           std::condition_variable& waiters)
    : registration_(token ? std::make_unique<Registration>(token, mutex, waiters) : nullptr) {}

CancelWakeup::~CancelWakeup() = default;

}  // namespace nous::http
