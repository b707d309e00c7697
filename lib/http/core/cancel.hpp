#pragma once
// Cross-thread cancellation. A token keeps a list of what its calls are
// blocked on (a socket, a resolver wait, a curl transfer); cancel() sets the
// flag and interrupts each of them. One token may serve many concurrent calls.
// This layer knows no sockets: the transport registers targets that shut
// their socket down (docs/design/poco-traps.md#cross-thread-cancel).

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "nous/http/options.hpp"

namespace nous::http {

namespace detail {

/// Something a cancel must wake. interrupt() runs on the cancelling thread,
/// under the token's lock: it must be quick and must not call back into the token.
class CancelTarget {
  public:
    virtual void interrupt() noexcept = 0;

  protected:
    ~CancelTarget() = default;
};

}  // namespace detail

struct CancelToken::State {
    std::mutex mutex;
    std::vector<detail::CancelTarget*> targets;  ///< guarded by mutex
};

namespace detail {

struct CancelAccess {
    static CancelToken::State& state(const CancelToken& token) noexcept { return *token.state_; }
};

inline bool is_cancelled(const CancelToken* token) noexcept { return token && token->cancelled(); }

/// Wakes the waiters of a condition variable at a cancel, so that each looks
/// at its token again: a wait needs no slices to see a cancel. The notify
/// is made under the waiters' mutex, so a waiter between its look at the
/// token and its wait sees it. Register it before taking that mutex (a
/// cancel takes the token's lock, then this one).
class NotifyOnCancel final : public CancelTarget {
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

/// Registers `target` with the token for the lifetime of this object. If the
/// token is already cancelled, the target is interrupted at once. A null token
/// registers nothing.
class CancelRegistration {
  public:
    CancelRegistration(const CancelToken* token, CancelTarget* target);
    ~CancelRegistration();
    CancelRegistration(const CancelRegistration&) = delete;
    CancelRegistration& operator=(const CancelRegistration&) = delete;

  private:
    const CancelToken* token_;
    CancelTarget* target_;
};

}  // namespace detail
}  // namespace nous::http
