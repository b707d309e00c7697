#pragma once
// One epoll instance and one thread for the whole process, watching the
// sockets of window streams whose consumers are away: a socket is armed
// here (EPOLLONESHOT) while nobody reads it, and bytes arriving then wake
// the stream's reader. The thread also makes the checks a consumer books
// as it goes away (check_later): one still away then has its reader woken. No descriptor a stream:
// the relay it serves once took three (two epoll instances and an eventfd), which 10,000 streams
// could not have under a limit of 20,000.
// docs/design/backpressure.md#the-read-relay

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace nous::http::detail {

/// What the watch wakes: called on the watch's thread, under its table's
/// lock (so never after ReadWatch::remove() returned).
class WatchTarget {
  public:
    virtual void socket_ready() noexcept = 0;
    /// A check_later() come due: `visit` is what the target passed then.
    virtual void check_due(std::uint32_t visit) noexcept = 0;

  protected:
    ~WatchTarget() = default;
};

class ReadWatch {
  public:
    /// The process's watch, started at its first use (again in a child of
    /// fork(), which has no thread of its parent's); nullptr when it cannot
    /// be (no descriptor or no thread for it).
    static ReadWatch* get() noexcept;

    /// A socket in the watch.
    struct Entry {
        int fd = -1;
        std::uint64_t key = 0;  ///< the table's slot and its generation
    };
    /// Adds `fd`, disarmed. False when epoll refuses it (errno says why).
    bool add(int fd, WatchTarget& target, Entry& entry) noexcept;
    /// The socket's next bytes, or bytes already there, wake its target once.
    void arm(const Entry& entry) noexcept;
    /// Nothing wakes the target until the next arm().
    void disarm(const Entry& entry) noexcept;
    /// Out of the watch: the target is never called again once this returns.
    void remove(Entry& entry) noexcept;
    /// Calls the target's check_due(visit) limits::relay_arm_delay from
    /// now, unless the entry left the watch by then. False (nothing
    /// booked) when there is no memory for it.
    bool check_later(const Entry& entry, std::uint32_t visit) noexcept;

  private:
    using Clock = std::chrono::steady_clock;

    ReadWatch(int epoll_fd, int wake_fd) : epoll_fd_(epoll_fd), wake_fd_(wake_fd) {}
    void watch() noexcept;
    /// How long the watch's thread may sleep: until the first check due,
    /// or for good (-1) when none is booked. Takes in the checks booked since.
    int take_booked_checks() noexcept;
    /// Under the table's lock: every check due by now, made.
    void make_due_checks() noexcept;
    /// Under the table's lock: the target an event's or a check's key
    /// names, nullptr once its entry left the watch.
    WatchTarget* target_of(std::uint64_t key) const noexcept;

    struct Slot {
        WatchTarget* target = nullptr;
        std::uint32_t generation = 0;
    };

    struct Check {
        std::uint64_t key;
        std::uint32_t visit;
        Clock::time_point due;
    };

    const int epoll_fd_;
    /// An eventfd in the instance: a check booked while the watch's thread
    /// sleeps with none due wakes it (once, not at every booking).
    const int wake_fd_;
    std::mutex table_mutex_;
    std::vector<Slot> slots_;          ///< guarded by table_mutex_
    std::vector<std::uint32_t> free_;  ///< guarded by table_mutex_: slots to reuse
    std::mutex booked_mutex_;
    std::vector<Check> booked_;     ///< guarded by booked_mutex_: checks not yet taken in
    bool sleeps_for_good_ = false;  ///< guarded by booked_mutex_
    /// The watch's thread's own: checks in the order they come due (each
    /// is booked the same delay ahead), the first one at checks_head_.
    std::vector<Check> checks_;
    std::size_t checks_head_ = 0;
};

}  // namespace nous::http::detail
