#pragma once
// Per-origin pool of keep-alive connections with exclusive checkout, shared
// by post() and streams.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "core/config.hpp"
#include "transport/connector.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

class OriginPool {
  public:
    OriginPool(ConnectionKey key, PoolSettings settings, std::unique_ptr<Connector> connector);
    ~OriginPool();

    struct Lease {
        std::unique_ptr<Transport> transport;
        bool reused = false;
        ConnectTimings timings;
    };

    /// An idle live connection (when `allow_reuse`), or a new one when the
    /// origin is under its cap; otherwise waits for a slot until the connect
    /// deadline (pool_timeout). A failed connect frees its slot.
    Result<Lease> checkout(const Deadlines& deadlines, const CancelToken* cancel, bool allow_reuse);
    /// Returns a connection; not reusable ones are closed and free their slot.
    void checkin(std::unique_ptr<Transport> transport, bool reusable);
    /// Closes every idle connection.
    void clear();
    /// The connector's TLS session is dropped (testing::forget_tls_sessions).
    void forget_tls_session() { connector_->forget_tls_session(); }
    /// Closes idle connections past their expiry; returns how many remain idle.
    std::size_t reap_expired();
    const ConnectionKey& key() const noexcept { return key_; }
    /// Connections open now (leased + idle), for tests.
    std::size_t open_count();

    /// fork(): the pool's lock held across it (prepare, then parent), or
    /// made anew in the child, where no thread holds it (pool.cpp).
    void lock_for_fork() { mutex_.lock(); }
    void unlock_after_fork() { mutex_.unlock(); }
    void renew_lock_in_child();

  private:
    /// checkout()'s first half: an idle live connection (a lease with its
    /// transport), a slot taken for a new one (a lease without), or the
    /// wait's failure. A frame of its own: the wait's state is off the
    /// stack while the new connection is opened.
    Result<Lease> reuse_or_take_slot(const Deadlines& deadlines, const CancelToken* cancel,
                                     bool allow_reuse);
    void release_slot();

    const ConnectionKey key_;
    const PoolSettings settings_;
    const std::unique_ptr<Connector> connector_;
    std::mutex mutex_;
    std::condition_variable slot_freed_;
    std::deque<std::unique_ptr<Transport>> idle_;  ///< guarded by mutex_; back: most recently used
    std::size_t open_ = 0;                         ///< guarded by mutex_; leased + idle
};

/// The process-wide pool for a key (created on first use; pools live for the process).
std::shared_ptr<OriginPool> pool_for(const ConnectionKey& key, const PoolSettings& settings);
/// The same, remembering the last pool this thread used, so that repeated calls
/// to one origin skip building the key and the registry lookup.
std::shared_ptr<OriginPool> pool_for(const Url& url, const std::string& proxy,
                                     const Options& options, const PoolSettings& settings);

/// Tests: pools created from now on open their connections through `factory`
/// (an in-memory transport that fails on call N); nullptr restores POCO.
using ConnectorFactory = std::function<std::unique_ptr<Connector>(const ConnectionKey&)>;
void set_connector_factory_for_tests(ConnectorFactory factory);
/// Tests: forget every pool (idle connections closed), so that new settings
/// or a new connector factory take effect.
void reset_pools_for_tests();
/// Bumped by every pool_clear(): backends that keep connections outside the
/// pools (the curl backend, per thread) close them when it changed.
std::uint64_t pool_clear_generation() noexcept;

struct PoolCounters {
    std::atomic<std::uint64_t> created{0}, reused{0}, stale{0}, resent{0}, tls_resumed{0};
};
PoolCounters& pool_counters();

}  // namespace nous::http::detail
