#include "transport/deadline_watch.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/log.hpp"

namespace nous::http::detail {

namespace {

// One watcher thread for the process, started on first use. Interrupts run
// under its lock, so a watch that is destroyed never sees a late interrupt.
struct Watcher {
    std::mutex mutex;
    std::condition_variable changed;
    std::multimap<Clock::time_point, std::pair<std::uint64_t, CancelTarget*>> queue;  ///< guarded by mutex
    std::set<std::uint64_t> fired;  ///< guarded by mutex
    std::uint64_t next_id = 1;      ///< guarded by mutex
    bool running = false;           ///< guarded by mutex

    void run() {
        std::unique_lock lock(mutex);
        for (;;) {
            if (queue.empty()) {
                changed.wait(lock);
                continue;
            }
            auto first = queue.begin();
            if (Clock::now() < first->first) {
                changed.wait_until(lock, first->first);
                continue;
            }
            first->second.second->interrupt();
            fired.insert(first->second.first);
            queue.erase(first);
        }
    }
};

Watcher& watcher() {
    static auto* w = new Watcher;  // never destroyed: its thread runs until exit
    return *w;
}

}  // namespace

DeadlineWatch::DeadlineWatch(CancelTarget* target, Clock::time_point when) : target_(target), when_(when) {
    if (when_ == Clock::time_point::max()) return;
    auto& w = watcher();
    std::lock_guard lock(w.mutex);
    if (!w.running) {
        try {
            std::thread([] { watcher().run(); }).detach();
            w.running = true;
        } catch (const std::system_error& e) {
            // No thread: per-read timeouts still bound each wait.
            warn_once("deadline-watch", std::string("cannot start the deadline watcher: ") + e.what());
            return;
        }
    }
    id_ = w.next_id++;
    w.queue.emplace(when_, std::make_pair(id_, target_));
    w.changed.notify_one();
}

DeadlineWatch::~DeadlineWatch() {
    if (id_ == 0) return;
    auto& w = watcher();
    std::lock_guard lock(w.mutex);
    auto range = w.queue.equal_range(when_);
    for (auto it = range.first; it != range.second; ++it)
        if (it->second.first == id_) {
            w.queue.erase(it);
            break;
        }
    w.fired.erase(id_);
}

bool DeadlineWatch::fired() const noexcept {
    if (id_ == 0) return false;
    auto& w = watcher();
    std::lock_guard lock(w.mutex);
    return w.fired.count(id_) != 0;
}

}  // namespace nous::http::detail
