// The idle readers (reader_thread.hpp): a stack of threads whose stream
// ended, each waiting for the next stream's body on a condition variable of
// its own, until limits::reader_idle_expiry.

#include "stream/reader_thread.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <vector>

#include "core/limits.hpp"
#include "core/sanitizers.hpp"
#include "core/wake_word.hpp"
#include "stream/futex_hash.hpp"
#include "transport/sigpipe.hpp"

namespace nous::http::detail {

/// One reader thread's mailbox. Never freed: a joiner may still be waking on
/// it after the thread went idle and expired, so the struct of an exited
/// thread is kept, and given to the next thread started. Its job numbers
/// only grow.
struct ReaderWorker {
    std::mutex mutex;
    std::condition_variable job_given;  ///< the thread waits here for a body
    std::function<void()> job;          ///< guarded by mutex
    std::uint64_t jobs_given = 0;       ///< guarded by mutex: bodies handed to this mailbox
    /// Bodies that returned. Joiners wait on `done_word` (wake_word.hpp), not
    /// on a condition variable: the joiner, woken, takes no lock, and a
    /// joiner that comes late makes no system call at all.
    std::atomic<std::uint64_t> jobs_done{0};
    WakeWord done_word;
    std::atomic<std::uint32_t> joiners{0};  ///< joiners announced on done_word

    /// The thread's body `job` returned.
    void finished(std::uint64_t job) noexcept {
        jobs_done.store(job, std::memory_order_seq_cst);
        done_word.bump();
        if (joiners.load(std::memory_order_seq_cst) != 0) done_word.wake_all();
    }
};

namespace {

class ReaderPool {
  public:
    /// Never destroyed: idle readers sleep on its workers until the process
    /// exits, after static destructors ran.
    static ReaderPool& instance() {
        static ReaderPool* pool = new ReaderPool;
        return *pool;
    }

    /// An idle reader, taken off the idle stack, or nullptr.
    ReaderWorker* take_idle() {
        std::lock_guard lock(mutex_);
        ++bodies_run_;
        if (idle_.empty()) return nullptr;
        ReaderWorker* worker = idle_.back();  // the last to go idle: its stack is the warmest
        idle_.pop_back();
        return worker;
    }

    /// A mailbox for a new thread: an exited thread's, or a new one.
    ReaderWorker* new_worker() {
        std::lock_guard lock(mutex_);
        if (!retired_.empty()) {
            ReaderWorker* worker = retired_.back();
            retired_.pop_back();
            return worker;
        }
        return new ReaderWorker;
    }

    void started(bool ok, ReaderWorker* worker) {
        std::size_t grow_for = 0;
        {
            std::lock_guard lock(mutex_);
            if (!ok) {
                retired_.push_back(worker);  // no thread came: the mailbox waits for the next one
                return;
            }
            ++threads_started_;
            ++threads_alive_;
            if (threads_alive_ > futex_room_ && !growing_futex_hash_) {
                growing_futex_hash_ = true;  // one at a time: threads start together
                // Twice the threads alive: a hash that keeps up with a
                // growing count is rehashed a few times, not at every start.
                grow_for = 2 * threads_alive_;
            }
        }
        if (grow_for == 0) return;
        // Outside the lock: growing the hash rehashes its sleepers.
        const std::size_t room = make_futex_hash_room(grow_for);
        std::lock_guard lock(mutex_);
        futex_room_ = room;
        growing_futex_hash_ = false;
    }

    void make_idle(ReaderWorker* worker) {
        std::lock_guard lock(mutex_);
        idle_.push_back(worker);
    }

    /// At the idle expiry: true when `worker` was still idle, and is now
    /// retired (its thread exits without touching it again); false when a
    /// stream took it meanwhile (its body is on the way).
    bool retire(ReaderWorker* worker) {
        std::lock_guard lock(mutex_);
        for (auto it = idle_.begin(); it != idle_.end(); ++it) {
            if (*it != worker) continue;
            idle_.erase(it);
            retired_.push_back(worker);
            --threads_alive_;
            return true;
        }
        return false;
    }

    ReaderCounts counts() {
        std::lock_guard lock(mutex_);
        return {threads_started_, bodies_run_, idle_.size()};
    }

    std::chrono::milliseconds idle_expiry() const noexcept {
        return std::chrono::milliseconds(idle_expiry_ms_.load(std::memory_order_relaxed));
    }
    void set_idle_expiry(std::chrono::milliseconds expiry) noexcept {
        idle_expiry_ms_.store(expiry.count(), std::memory_order_relaxed);
    }

  private:
    ReaderPool() {
        // A child of fork() has none of the idle threads: it forgets them
        // (their mailboxes leak) and starts its own. The lock is held across
        // fork() so that the child's copy of the stacks is consistent.
        pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                       [] {
                           ReaderPool& pool = instance();
                           pool.idle_.clear();
                           pool.threads_alive_ = 0;
                           // The child's futex hash is its own, new: grown again from the start.
                           pool.futex_room_ = kDefaultFutexRoom;
                           pool.growing_futex_hash_ = false;
                           pool.mutex_.unlock();
                       });
    }

    std::mutex mutex_;
    std::vector<ReaderWorker*> idle_;     ///< threads waiting for a body; a stack
    std::vector<ReaderWorker*> retired_;  ///< mailboxes of threads that exited
    std::uint64_t threads_started_ = 0, bodies_run_ = 0;
    std::size_t threads_alive_ = 0;
    /// Reader threads the futex hash has room for (futex_hash.hpp): the
    /// kernel's default serves this many.
    static constexpr std::size_t kDefaultFutexRoom = 64;
    std::size_t futex_room_ = kDefaultFutexRoom;
    bool growing_futex_hash_ = false;
    std::atomic<std::int64_t> idle_expiry_ms_{
        std::chrono::milliseconds(limits::reader_idle_expiry).count()};
};

/// The lowest address of the calling reader thread's stack; 0 off a reader.
thread_local std::uintptr_t reader_stack_low = 0;

void note_reader_stack() noexcept {
#ifndef NOUS_SANITIZED
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    void* low = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0)
        reader_stack_low = reinterpret_cast<std::uintptr_t>(low);
    pthread_attr_destroy(&attributes);
#endif
}

void* reader_main(void* argument) {
    auto* worker = static_cast<ReaderWorker*>(argument);
    note_reader_stack();
    // POCO and OpenSSL write without MSG_NOSIGNAL: a peer's reset must not
    // kill the process.
    block_sigpipe_on_this_thread();
    ReaderPool& pool = ReaderPool::instance();
    std::unique_lock lock(worker->mutex);
    std::uint64_t taken = worker->jobs_done.load();  // the body it was started for is the next
    for (;;) {
        while (worker->jobs_given == taken) {
            if (worker->job_given.wait_for(lock, pool.idle_expiry()) == std::cv_status::timeout &&
                worker->jobs_given == taken) {
                lock.unlock();
                if (pool.retire(worker)) return nullptr;  // the mailbox is not ours from here
                lock.lock();                              // taken meanwhile: its body comes
            }
        }
        std::function<void()> job = std::move(worker->job);
        worker->job = nullptr;
        taken = worker->jobs_given;
        lock.unlock();
        job();
        job = nullptr;  // the body's captures go before its owner hears it returned
        // Idle before the joiner hears of it: a stream started after the
        // join returned finds this thread.
        pool.make_idle(worker);
        worker->finished(taken);
        lock.lock();
    }
}

/// Puts `body` in `worker`'s mailbox and wakes the thread if it waits
/// there; the body's job number. The thread is woken after the lock is
/// given back: woken under it, it went straight back to sleep on the lock
/// and was woken again by the unlock, two context switches more a stream.
std::uint64_t hand_over(ReaderWorker* worker, std::function<void()> body) {
    std::uint64_t job;
    {
        std::lock_guard lock(worker->mutex);
        worker->job = std::move(body);
        job = ++worker->jobs_given;
    }
    worker->job_given.notify_one();
    return job;
}

}  // namespace

// Not inlined: its own frame is the one below the caller's, and only what
// lies under it is released.
[[gnu::noinline]] void release_reader_stack_below_caller() noexcept {
    if (reader_stack_low == 0) return;
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    // This frame and the madvise call's own few bytes lie within the margin
    // under the frame's address: the page that holds them is kept.
    constexpr std::uintptr_t margin = 256;
    const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    const std::uintptr_t end = (here - margin) & ~(page - 1);
    if (end <= reader_stack_low) return;
    ::madvise(reinterpret_cast<void*>(reader_stack_low), end - reader_stack_low, MADV_DONTNEED);
}

void ReaderThread::start(std::function<void()> body) {
    ReaderPool& pool = ReaderPool::instance();
    if (ReaderWorker* worker = pool.take_idle()) {
        job_ = hand_over(worker, std::move(body));
        worker_ = worker;
        return;
    }
    ReaderWorker* worker = pool.new_worker();
    job_ = hand_over(worker, std::move(body));  // before its thread exists: nobody waits yet
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
#ifndef NOUS_SANITIZED
    // Sanitizer builds keep the default: their frames are larger.
    pthread_attr_setstacksize(&attributes, limits::reader_stack_bytes);
#endif
    pthread_t thread;
    const int failed = pthread_create(&thread, &attributes, &reader_main, worker);
    pthread_attr_destroy(&attributes);
    if (failed) {
        {
            std::lock_guard lock(worker->mutex);
            worker->job = nullptr;
            worker->jobs_done.store(worker->jobs_given);  // nothing runs it
        }
        pool.started(false, worker);
        throw std::system_error(failed, std::generic_category(), "reader thread");
    }
    pool.started(true, worker);
    worker_ = worker;
}

void ReaderThread::join() noexcept {
    if (!worker_) return;
    ReaderWorker& worker = *worker_;
    // wake_word.hpp's protocol: the word read first, then the announcement,
    // then the look; ReaderWorker::finished() does the other side. No timer:
    // the protocol wakes every joiner, and a 100 ms slice here woke each of
    // 10,000 joiners ten times a second while 10,000 streams ended at once,
    // which took the CPU the readers needed to end (a join took seconds, and
    // the run up to ten times its CPU: docs/BENCHMARKS.md, "Scale").
    while (worker.jobs_done.load(std::memory_order_acquire) < job_) {
        const std::uint32_t seen = worker.done_word.current();
        worker.joiners.fetch_add(1, std::memory_order_seq_cst);
        if (worker.jobs_done.load(std::memory_order_seq_cst) < job_)
            worker.done_word.wait_unbounded(seen);
        worker.joiners.fetch_sub(1, std::memory_order_relaxed);
    }
    worker_ = nullptr;
}

ReaderCounts reader_counts() noexcept { return ReaderPool::instance().counts(); }

void set_reader_idle_expiry(std::chrono::milliseconds expiry) noexcept {
    ReaderPool::instance().set_idle_expiry(expiry);
}

}  // namespace nous::http::detail
