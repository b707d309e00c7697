#pragma once
// Deadlines that count content events, not bytes (Options::first_event_timeout,
// Options::event_idle_timeout). One process-wide watcher thread sleeps until
// the earliest deadline of the streams whose consumer is waiting; a stream
// whose deadline passes is interrupted as a cancel would (its source's
// cancel() is thread-safe), and its handle reports timeout_read. Per event the
// consumer pays an atomic store; the watcher wakes about once per deadline.
// docs/design/content-deadlines.md.

#include <atomic>
#include <cstdint>
#include <optional>

#include "core/deadline.hpp"
#include "nous/http/error.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

/// What the watcher interrupts. Runs on the watcher's thread under its lock:
/// quick, and never back into the watch.
class ContentDeadlineTarget {
  public:
    virtual void content_deadline_passed() noexcept = 0;

  protected:
    ~ContentDeadlineTarget() = default;
};

/// One stream's content deadlines, registered with the watcher for its lifetime.
class ContentWatch {
  public:
    /// `start`: when the call began (first_event_timeout counts from it).
    ContentWatch(ContentDeadlineTarget* target, Clock::time_point start,
                 std::optional<Milliseconds> first_event, std::optional<Milliseconds> idle);
    ~ContentWatch();
    ContentWatch(const ContentWatch&) = delete;
    ContentWatch& operator=(const ContentWatch&) = delete;

    /// Consumer thread: about to wait for the source. The deadline runs from
    /// the first such call after a content event (later calls keep it).
    void waiting() noexcept;
    /// Consumer thread: a content event was handed out; the clock stops.
    void content() noexcept;
    /// The timeout_read error once a deadline passed (consumer thread).
    std::optional<Error> expired() const;

  private:
    friend class ContentWatcher;
    enum class Which : int { none, first_event, idle };
    /// Watcher thread, under its lock: fires unless the consumer moved the
    /// deadline since the watcher read `seen`.
    void fire(std::int64_t seen) noexcept;

    ContentDeadlineTarget* target_;
    Clock::time_point start_;
    std::optional<Milliseconds> first_event_, idle_;
    bool seen_content_ = false;  ///< consumer thread only
    /// Nanoseconds since the clock's epoch; 0: the consumer is not waiting.
    std::atomic<std::int64_t> deadline_ns_{0};
    std::atomic<int> armed_which_{0};  ///< the Which of deadline_ns_, for the watcher
    std::atomic<int> fired_{0};        ///< the Which that passed, 0 while none
};

}  // namespace nous::http::detail
