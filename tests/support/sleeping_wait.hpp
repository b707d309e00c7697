#pragma once
// A blocking call that must sleep until something wakes it, not in slices,
// and that a cancel of its token ends at once.

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "fault_server.hpp"
#include "nous/http/options.hpp"
#include "test_helpers.hpp"

namespace nous::test {

struct SleepingWait {
    bool asleep = false;      ///< seen asleep on a futex
    long sleeps = -1;         ///< times it went to sleep in a 200 ms window
    bool woke_early = false;  ///< it returned before the cancel
    bool ended = false;       ///< it returned after the cancel, within 10 s
    bool cancelled = false;   ///< `call` said its result was `cancelled`
};

/// Runs `call(token)` on a thread of its own (it returns whether its
/// result was `cancelled`), waits for the thread to sleep on a futex, counts
/// its sleeps over 200 ms (an observation window, not a synchronisation: a
/// wait in 20 ms slices sleeps ten times in it), then cancels the token.
inline SleepingWait cancel_while_asleep(
    const std::function<bool(const nous::http::CancelToken&)>& call) {
    SleepingWait seen;
    nous::http::CancelToken token;
    std::atomic<pid_t> caller{0};
    std::atomic<bool> returned{false}, cancelled{false};
    std::thread thread([&] {
        caller = static_cast<pid_t>(::syscall(SYS_gettid));
        cancelled = call(token);
        returned = true;
    });
    seen.asleep = wait_until([&] {
        const pid_t tid = caller.load();
        return tid != 0 && sleeping_in(tid) == SYS_futex;
    });
    if (seen.asleep) {
        const long before = sleeps_of(caller.load());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        seen.sleeps = sleeps_of(caller.load()) - before;
    }
    seen.woke_early = returned.load();
    token.cancel();
    seen.ended = wait_until([&] { return returned.load(); }, std::chrono::seconds(10));
    thread.join();
    seen.cancelled = cancelled.load();
    return seen;
}

}  // namespace nous::test
