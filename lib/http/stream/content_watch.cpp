// The content-deadline watcher: one thread for the process, a list of the
// watched streams, and a wake-up time that consumers compare against so that
// only a deadline earlier than the planned wake costs a notify.

#include "stream/content_watch.hpp"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace nous::http::detail {

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::int64_t to_ns(Clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

class ContentWatcher {
  public:
    static ContentWatcher& instance() {
        // Never destroyed: its thread may be waiting at exit.
        static auto* watcher = new ContentWatcher;
        return *watcher;
    }

    void add(ContentWatch* watch) {
        std::lock_guard lock(mutex_);
        watched_.push_back(watch);
        start_locked();
    }

    void remove(ContentWatch* watch) {
        // Under the lock: once this returns the watcher never touches `watch` again.
        std::lock_guard lock(mutex_);
        auto it = std::find(watched_.begin(), watched_.end(), watch);
        if (it != watched_.end()) {
            *it = watched_.back();
            watched_.pop_back();
        }
    }

    /// A consumer armed `deadline`: wake the watcher if it plans to sleep past it.
    /// The watcher publishes 0 while it scans, so a deadline stored during a
    /// scan it may have missed always notifies (both sides are seq_cst).
    void armed(std::int64_t deadline) {
        const std::int64_t planned = next_wake_.load();
        if (planned != 0 && deadline >= planned) return;
        std::lock_guard lock(mutex_);
        start_locked();  // a child of fork() starts its own here for a parent's stream
        wake_.notify_one();
    }

  private:
    ContentWatcher() {
        // A child of fork() has no watcher thread: started_ must say so, or
        // the child's content deadlines never fire. The lock is held across
        // fork() so that the child's copy of the list is consistent; the
        // child makes its mutex and condition variable anew (the parent's
        // waiter, the watcher thread, does not exist there).
        pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                       [] {
                           ContentWatcher& w = instance();
                           new (&w.mutex_) std::mutex;
                           new (&w.wake_) std::condition_variable;
                           w.started_ = false;
                           w.next_wake_.store(kNever);
                       });
    }

    void start_locked() {
        if (started_) return;
        started_ = true;
        std::thread([this] { run(); }).detach();
    }

    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            next_wake_.store(0);
            const std::int64_t now = to_ns(Clock::now());
            std::int64_t next = kNever;
            for (ContentWatch* w : watched_) {
                const std::int64_t d = w->deadline_ns_.load();
                if (d == 0) continue;
                if (d <= now)
                    w->fire(d);
                else
                    next = std::min(next, d);
            }
            next_wake_.store(next);
            if (next == kNever)
                wake_.wait(lock);
            else
                wake_.wait_until(lock, Clock::time_point(std::chrono::nanoseconds(next)));
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<ContentWatch*> watched_;  ///< guarded by mutex_
    bool started_ = false;                ///< guarded by mutex_
    std::atomic<std::int64_t> next_wake_{kNever};
};

ContentWatch::ContentWatch(ContentDeadlineTarget* target, Clock::time_point start,
                           std::optional<Milliseconds> first_event,
                           std::optional<Milliseconds> idle)
    : target_(target), start_(start), first_event_(first_event), idle_(idle) {
    ContentWatcher::instance().add(this);
}

ContentWatch::~ContentWatch() { ContentWatcher::instance().remove(this); }

void ContentWatch::waiting() noexcept {
    if (deadline_ns_.load(std::memory_order_relaxed) != 0 || fired_.load() != 0) return;
    std::int64_t deadline = kNever;
    Which which = Which::none;
    if (!seen_content_ && first_event_) {
        deadline = to_ns(saturating_add(start_, *first_event_));
        which = Which::first_event;
    }
    if (idle_) {
        const std::int64_t by_idle = to_ns(saturating_add(Clock::now(), *idle_));
        if (by_idle < deadline) {
            deadline = by_idle;
            which = Which::idle;
        }
    }
    if (which == Which::none) return;
    armed_which_.store(static_cast<int>(which));
    deadline_ns_.store(std::max<std::int64_t>(deadline, 1));
    ContentWatcher::instance().armed(deadline);
}

void ContentWatch::content() noexcept {
    seen_content_ = true;
    deadline_ns_.store(0, std::memory_order_relaxed);
}

void ContentWatch::fire(std::int64_t seen) noexcept {
    const int which = armed_which_.load();
    if (!deadline_ns_.compare_exchange_strong(seen, 0)) return;  // content came meanwhile
    int none = 0;
    if (fired_.compare_exchange_strong(none, which)) target_->content_deadline_passed();
}

std::optional<Error> ContentWatch::expired() const {
    switch (static_cast<Which>(fired_.load())) {
        case Which::none:
            return std::nullopt;
        case Which::first_event:
            return Error(ErrorCode::timeout_read,
                         "no content event within " + std::to_string(first_event_->count()) +
                             " ms of the request (first_event_timeout; comments and pings do "
                             "not count)");
        case Which::idle:
            return Error(ErrorCode::timeout_read,
                         "no content event for " + std::to_string(idle_->count()) +
                             " ms (event_idle_timeout; comments and pings do not count)");
    }
    return std::nullopt;
}

}  // namespace nous::http::detail
