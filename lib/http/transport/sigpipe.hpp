#pragma once
// SIGPIPE on the caller's thread, for code that writes to sockets through
// POCO or OpenSSL.

#include <csignal>
#include <ctime>

namespace nous::http::detail {

/// For the library's own threads (a stream's reader, the pool's reaper),
/// which write to sockets only: SIGPIPE blocked for the thread's life
/// (docs/design/poco-traps.md#sigpipe).
inline void block_sigpipe_on_this_thread() noexcept {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

/// POCO and OpenSSL write without MSG_NOSIGNAL (docs/design/poco-traps.md#sigpipe):
/// on the caller's thread, block SIGPIPE around such writes, consume one that
/// they raised, and restore the caller's mask. A SIGPIPE that was already
/// pending when the guard began is the caller's: it is left alone.
class SigpipeGuard {
  public:
    SigpipeGuard() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
        was_blocked_ = sigismember(&old_, SIGPIPE) == 1;
        if (was_blocked_) {
            sigset_t pending;
            sigpending(&pending);
            was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        }
    }
    ~SigpipeGuard() {
        if (!was_pending_) {
            sigset_t pending;
            sigpending(&pending);
            if (sigismember(&pending, SIGPIPE) == 1) {
                timespec zero{0, 0};
                sigtimedwait(&pipe_, nullptr, &zero);
            }
        }
        if (!was_blocked_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;

  private:
    sigset_t pipe_{}, old_{};
    bool was_blocked_ = false;
    bool was_pending_ = false;
};

}  // namespace nous::http::detail
