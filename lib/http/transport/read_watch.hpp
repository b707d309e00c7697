#pragma once
// One epoll instance and one thread for the whole process, watching the
// sockets of window streams whose consumers are away: a socket is armed
// here (EPOLLONESHOT) while nobody reads it, and bytes arriving then wake
// the stream's reader. No descriptor a stream: the relay it serves once
// took three (two epoll instances and an eventfd), which 10,000 streams
// could not have under a limit of 20,000.
// docs/design/backpressure.md#the-read-relay

#include <cstdint>
#include <mutex>
#include <vector>

namespace nous::http::detail {

/// What the watch wakes: called on the watch's thread, under its table's
/// lock (so never after ReadWatch::remove() returned).
class WatchTarget {
  public:
    virtual void socket_ready() noexcept = 0;

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

  private:
    explicit ReadWatch(int epoll_fd) : epoll_fd_(epoll_fd) {}
    void watch() noexcept;

    struct Slot {
        WatchTarget* target = nullptr;
        std::uint32_t generation = 0;
    };

    const int epoll_fd_;
    std::mutex table_mutex_;
    std::vector<Slot> slots_;          ///< guarded by table_mutex_
    std::vector<std::uint32_t> free_;  ///< guarded by table_mutex_: slots to reuse
};

}  // namespace nous::http::detail
