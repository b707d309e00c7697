#pragma once
// Cross-thread cancellation. A token keeps a list of what its calls are
// blocked on (a socket, a resolver wait, a curl transfer); cancel() sets the
// flag and interrupts each of them. One token may serve many concurrent calls.
// This layer knows no sockets: the transport registers targets that shut
// their socket down (docs/design/poco-traps.md#cross-thread-cancel).

#include <atomic>
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
