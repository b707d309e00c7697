// Per-origin connection pools: checkout, checkin, limits, idle expiry.

#include "transport/pool.hpp"

#include <pthread.h>

#include <map>
#include <new>
#include <optional>
#include <thread>

#include "core/cancel.hpp"
#include "core/log.hpp"
#include "nous/http/client.hpp"
#include "nous/http/testing.hpp"
#include "transport/sigpipe.hpp"

namespace nous::http {

namespace detail {

PoolCounters& pool_counters() {
    static PoolCounters counters;
    return counters;
}

namespace {

struct PoolRegistry {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<OriginPool>> pools;  ///< guarded by mutex
    ConnectorFactory connector_factory;                        ///< guarded by mutex; tests only
    std::atomic<std::uint64_t> generation{0};                  ///< bumped by reset_pools_for_tests
};
PoolRegistry& registry() {
    static auto* r = new PoolRegistry;  // never destroyed: pools may be used during exit
    return *r;
}

std::vector<std::shared_ptr<OriginPool>> all_pools() {
    auto& r = registry();
    std::vector<std::shared_ptr<OriginPool>> pools;
    std::lock_guard lock(r.mutex);
    for (auto& [id, pool] : r.pools) pools.push_back(pool);
    return pools;
}

// Idle expiry must hold for an origin that is never called again, so a
// reaper thread runs while any connection is idle, and stops when none is.
struct Reaper {
    std::mutex mutex;
    bool running = false;  ///< guarded by mutex
};
Reaper& reaper() {
    static auto* r = new Reaper;  // never destroyed: the detached thread may outlive main()
    return *r;
}
constexpr auto kReapPeriod = std::chrono::milliseconds(250);

void reap_loop() {
    // Closing an idle TLS connection writes close_notify.
    block_sigpipe_on_this_thread();
    for (;;) {
        std::this_thread::sleep_for(kReapPeriod);
        // Counting and stopping under the reaper's lock: a checkin that parks a
        // connection after the count finds `running` false and starts a new reaper.
        std::lock_guard lock(reaper().mutex);
        std::size_t idle = 0;
        for (auto& pool : all_pools()) idle += pool->reap_expired();
        if (idle == 0) {
            reaper().running = false;
            return;
        }
    }
}

/// fork() copies the locks as the parent's threads held them, and not the
/// threads: had the reaper been inside its scan, a child's first post()
/// would wait for ever on a pool's lock (a child of a forking server, and
/// pool_test's EMFILE child under ThreadSanitizer, which widens the window,
/// hung so). The locks are held across fork() in the order every path takes
/// them (the reaper's, the registry's, each pool's), released in the
/// parent, and made anew in the child. `running` is kept as the parent had
/// it: a child starts no reaper where the parent ran one (ThreadSanitizer
/// refuses a thread started after a multithreaded fork), and judges expiry
/// at its next checkout instead.
void hold_pools_across_fork() {
    static const int installed = pthread_atfork(
        [] {
            reaper().mutex.lock();
            registry().mutex.lock();
            for (auto& [id, pool] : registry().pools) pool->lock_for_fork();
        },
        [] {
            for (auto& [id, pool] : registry().pools) pool->unlock_after_fork();
            registry().mutex.unlock();
            reaper().mutex.unlock();
        },
        [] {
            for (auto& [id, pool] : registry().pools) pool->renew_lock_in_child();
            new (&registry().mutex) std::mutex;
            new (&reaper().mutex) std::mutex;
        });
    (void)installed;
}

void ensure_reaper() {
    auto& r = reaper();
    std::lock_guard lock(r.mutex);
    if (r.running) return;
    try {
        std::thread(reap_loop).detach();
        r.running = true;
    } catch (const std::system_error& e) {
        // No thread to be had (EAGAIN): expiry is still judged at the next checkout.
        warn_once("pool-reaper",
                  std::string("cannot start the idle-connection reaper: ") + e.what());
    }
}

}  // namespace

void set_connector_factory_for_tests(ConnectorFactory factory) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.connector_factory = std::move(factory);
}

void reset_pools_for_tests() {
    std::map<std::string, std::shared_ptr<OriginPool>> old;
    {
        auto& r = registry();
        std::lock_guard lock(r.mutex);
        old.swap(r.pools);
        r.generation.fetch_add(1, std::memory_order_acq_rel);
    }
    for (auto& [id, pool] : old) pool->clear();
}

void OriginPool::renew_lock_in_child() {
    new (&mutex_) std::mutex;
    new (&slot_freed_) std::condition_variable;  // its waiters were the parent's threads
}

std::shared_ptr<OriginPool> pool_for(const ConnectionKey& key, const PoolSettings& settings) {
    hold_pools_across_fork();  // once per process, before the first pool exists
    std::string id = key.to_string();
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    auto& slot = r.pools[id];
    if (!slot) {
        std::unique_ptr<Connector> connector =
            r.connector_factory ? r.connector_factory(key) : std::make_unique<PocoConnector>(key);
        slot = std::make_shared<OriginPool>(key, settings, std::move(connector));
    }
    return slot;
}

std::shared_ptr<OriginPool> pool_for(const Url& url, const std::string& proxy,
                                     const Options& options, const PoolSettings& settings) {
    thread_local ConnectionKey last_key;
    thread_local std::shared_ptr<OriginPool> last_pool;
    thread_local std::uint64_t last_generation = 0;
    const std::uint64_t generation = registry().generation.load(std::memory_order_acquire);
    if (last_pool && last_generation == generation && last_key.matches(url, proxy, options))
        return last_pool;
    ConnectionKey key = ConnectionKey::for_call(url, proxy, options);
    last_pool = pool_for(key, settings);
    last_generation = generation;
    last_key = std::move(key);
    return last_pool;
}

OriginPool::OriginPool(ConnectionKey key, PoolSettings settings,
                       std::unique_ptr<Connector> connector)
    : key_(std::move(key)), settings_(settings), connector_(std::move(connector)) {}

OriginPool::~OriginPool() = default;

void OriginPool::release_slot() {
    std::lock_guard lock(mutex_);
    --open_;
    slot_freed_.notify_one();
}

std::size_t OriginPool::open_count() {
    std::lock_guard lock(mutex_);
    return open_;
}

[[gnu::noinline]] Result<OriginPool::Lease> OriginPool::reuse_or_take_slot(
    const Deadlines& deadlines, const CancelToken* cancel, bool allow_reuse) {
    std::vector<std::unique_ptr<Transport>> discarded;  // closed outside the lock
    // Registered only by a checkout that must wait, and outside the pool's
    // lock (a cancel takes the token's lock, then the pool's); unregistered
    // after the lock is given back (declared before it).
    std::optional<CancelWakeup> wake_on_cancel;
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            while (allow_reuse && !idle_.empty()) {
                auto transport = std::move(idle_.back());
                idle_.pop_back();
                // Read the clock here: this loop may run again after waiting for a slot.
                const auto idle_for = Clock::now() - transport->idle_since;
                const bool expired = idle_for > settings_.idle_timeout;
                // The liveness probe runs however short the idle time: the
                // stale resend would cover a peer's close, but not bytes that
                // arrived unasked (an extra response, a 408 before a close),
                // which the next request would take for its own response.
                if (!expired && transport->probe_alive()) {
                    pool_counters().reused.fetch_add(1, std::memory_order_relaxed);
                    return Lease{std::move(transport), true, {}};
                }
                pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
                --open_;
                discarded.push_back(std::move(transport));
            }
            if (open_ < settings_.max_connections) break;
            if (!allow_reuse && !idle_.empty()) {
                // A resend needs a fresh connection: close an idle one to make room.
                discarded.push_back(std::move(idle_.front()));
                idle_.pop_front();
                --open_;
                continue;
            }
            if (is_cancelled(cancel))
                return Error(ErrorCode::cancelled, "cancelled waiting for a pooled connection");
            auto limit = deadlines.connect_limit();
            if (Clock::now() >= limit)
                return Error(deadlines.connect_timeout_code() == ErrorCode::timeout_total
                                 ? ErrorCode::timeout_total
                                 : ErrorCode::pool_timeout,
                             "all " + std::to_string(settings_.max_connections) +
                                 " connections to " + key_.origin.origin() + " stayed busy");
            if (cancel && !wake_on_cancel) {
                lock.unlock();
                wake_on_cancel.emplace(cancel, mutex_, slot_freed_);
                lock.lock();
                continue;  // look again: a slot, or the cancel, may have come meanwhile
            }
            // No slices: a freed slot, a checkin, the reaper and a cancel
            // all notify, and the deadline ends the wait. 20 ms slices woke
            // every waiting caller 50 times a second for nothing.
            slot_freed_.wait_until(lock, limit);
        }
        ++open_;  // the slot is ours from here: every path below frees it or hands it on
    }
    return Lease{};
}

Result<OriginPool::Lease> OriginPool::checkout(const Deadlines& deadlines,
                                               const CancelToken* cancel, bool allow_reuse) {
    {
        auto taken = reuse_or_take_slot(deadlines, cancel, allow_reuse);
        if (!taken) return taken.error();
        if (taken.value().transport) return std::move(taken.value());
    }
    // A slot is ours: every path below frees it or hands it on.
    Lease lease;
    Result<std::unique_ptr<Transport>> opened = Error(ErrorCode::connect_failed, "not connected");
    try {
        opened = connector_->connect(deadlines, cancel, lease.timings);
    } catch (const std::exception& e) {
        // Nothing may escape post() or next(), and the slot must come back.
        opened = Error(ErrorCode::connect_failed, std::string("connecting failed: ") + e.what());
    }
    if (!opened) {
        release_slot();
        return opened.error();
    }
    pool_counters().created.fetch_add(1, std::memory_order_relaxed);
    lease.transport = std::move(opened.value());
    if (lease.transport->resumed_tls_session())
        pool_counters().tls_resumed.fetch_add(1, std::memory_order_relaxed);
    return lease;
}

void OriginPool::checkin(std::unique_ptr<Transport> transport, bool reusable) {
    if (!transport) {
        release_slot();
        return;
    }
    if (reusable) connector_->on_reusable(*transport);
    std::unique_ptr<Transport> surplus;
    {
        std::lock_guard lock(mutex_);
        if (reusable) {
            transport->idle_since = Clock::now();
            ++transport->requests_served;
            idle_.push_back(std::move(transport));
            // At most max_idle kept: the least recently used one goes. An
            // expired oldest one goes too: bounded work per checkin.
            if (idle_.size() > settings_.max_idle ||
                Clock::now() - idle_.front()->idle_since > settings_.idle_timeout) {
                surplus = std::move(idle_.front());
                idle_.pop_front();
                --open_;
                pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
            }
        } else {
            --open_;
        }
        slot_freed_.notify_one();
    }
    // `transport` (if not reused) and `surplus` close here, outside the lock.
    if (reusable) ensure_reaper();
}

std::size_t OriginPool::reap_expired() {
    std::deque<std::unique_ptr<Transport>> expired;
    std::size_t remaining = 0;
    {
        std::lock_guard lock(mutex_);
        const auto now = Clock::now();
        while (!idle_.empty() && now - idle_.front()->idle_since > settings_.idle_timeout) {
            expired.push_back(std::move(idle_.front()));
            idle_.pop_front();
            --open_;
            pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
        }
        remaining = idle_.size();
        if (!expired.empty()) slot_freed_.notify_all();
    }
    return remaining;
}

void OriginPool::clear() {
    std::deque<std::unique_ptr<Transport>> closing;
    {
        std::lock_guard lock(mutex_);
        open_ -= idle_.size();
        closing.swap(idle_);
        slot_freed_.notify_all();
    }
}

}  // namespace detail

PoolStats pool_stats() {
    auto& c = detail::pool_counters();
    return {c.created.load(), c.reused.load(), c.stale.load(), c.resent.load(),
            c.tls_resumed.load()};
}

namespace detail {
namespace {
std::atomic<std::uint64_t> clear_generation{0};
}
std::uint64_t pool_clear_generation() noexcept {
    return clear_generation.load(std::memory_order_acquire);
}
}  // namespace detail

void pool_clear() {
    detail::clear_generation.fetch_add(1, std::memory_order_acq_rel);
    for (auto& pool : detail::all_pools()) pool->clear();
}

void testing::forget_tls_sessions() {
    for (auto& pool : detail::all_pools()) pool->forget_tls_session();
}

}  // namespace nous::http
