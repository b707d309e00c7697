#pragma once
// Per-origin pool of keep-alive connections with exclusive checkout.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "connection.hpp"

namespace nous::http::detail {

struct PoolSettings {
    std::size_t max_connections = defaults::pool_max_per_origin;
    Milliseconds idle_timeout = defaults::pool_idle_timeout;
};

class OriginPool {
public:
    OriginPool(ConnectionKey key, PoolSettings settings);
    ~OriginPool();

    struct Lease {
        std::unique_ptr<Connection> connection;
        bool reused = false;
        ConnectTimings timings;
    };

    /// An idle live connection (when `allow_reuse`), or a new one when the
    /// origin is under its cap; otherwise waits for a slot until the connect
    /// deadline (pool_timeout).
    Result<Lease> checkout(const Deadlines& deadlines, const CancelToken* cancel, bool allow_reuse);
    /// Returns a connection; not reusable ones are closed and free their slot.
    void checkin(std::unique_ptr<Connection> connection, bool reusable);
    /// Closes every idle connection.
    void clear();
    const ConnectionKey& key() const noexcept { return key_; }

private:
    Result<Poco::Net::Context::Ptr> tls_context();
    void release_slot();

    const ConnectionKey key_;
    const PoolSettings settings_;
    std::mutex mutex_;
    std::condition_variable slot_freed_;
    std::deque<std::unique_ptr<Connection>> idle_;  ///< back: most recently used
    std::size_t open_ = 0;                          ///< leased + idle
    Poco::Net::Context::Ptr tls_context_;
    Poco::Net::Session::Ptr tls_session_;
};

/// The process-wide pool for a key (created on first use; pools live for the process).
std::shared_ptr<OriginPool> pool_for(const ConnectionKey& key, const PoolSettings& settings);
/// The same, remembering the last pool this thread used, so that repeated calls
/// to one origin skip building the key and the registry lookup.
std::shared_ptr<OriginPool> pool_for(const Url& url, const std::string& proxy, const Options& options,
                                     const PoolSettings& settings);

struct PoolCounters {
    std::atomic<std::uint64_t> created{0}, reused{0}, stale{0}, resent{0}, tls_resumed{0};
};
PoolCounters& pool_counters();

}  // namespace nous::http::detail
