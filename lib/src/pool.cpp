#include "pool.hpp"

#include <map>

#include "cancel.hpp"

namespace nous::http {

namespace detail {

PoolCounters& pool_counters() {
    static PoolCounters counters;
    return counters;
}

namespace {
struct PoolRegistry {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<OriginPool>> pools;
};
PoolRegistry& registry() {
    static auto* r = new PoolRegistry;  // never destroyed: pools may be used during exit
    return *r;
}
}  // namespace

std::shared_ptr<OriginPool> pool_for(const ConnectionKey& key, const PoolSettings& settings) {
    std::string id = key.to_string();
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    auto& slot = r.pools[id];
    if (!slot) slot = std::make_shared<OriginPool>(key, settings);
    return slot;
}

std::shared_ptr<OriginPool> pool_for(const Url& url, const std::string& proxy, const Options& options,
                                     const PoolSettings& settings) {
    thread_local ConnectionKey last_key;
    thread_local std::shared_ptr<OriginPool> last_pool;
    const ConnectionKey& k = last_key;
    if (last_pool && k.origin.port == url.port && k.origin.https == url.https && k.origin.host == url.host &&
        k.insecure == options.insecure && k.receive_buffer_bytes == options.receive_buffer_bytes &&
        k.tcp_nodelay == options.tcp_nodelay && k.proxy == proxy && k.ca_file == options.ca_file)
        return last_pool;
    ConnectionKey key{url, proxy, options.ca_file, options.insecure, options.receive_buffer_bytes,
                      options.tcp_nodelay};
    last_pool = pool_for(key, settings);
    last_key = std::move(key);
    return last_pool;
}

OriginPool::OriginPool(ConnectionKey key, PoolSettings settings)
    : key_(std::move(key)), settings_(settings) {}

OriginPool::~OriginPool() = default;

Result<Poco::Net::Context::Ptr> OriginPool::tls_context() {
    // Called with mutex_ held.
    if (!tls_context_) {
        try {
            tls_context_ = make_tls_context(key_);
        } catch (const Poco::Exception& e) {
            return Error(ErrorCode::tls_failed, "TLS setup failed: " + e.displayText());
        }
    }
    return tls_context_;
}

void OriginPool::release_slot() {
    std::lock_guard lock(mutex_);
    --open_;
    slot_freed_.notify_one();
}

Result<OriginPool::Lease> OriginPool::checkout(const Deadlines& deadlines, const CancelToken* cancel,
                                               bool allow_reuse) {
    Poco::Net::Context::Ptr context;
    Poco::Net::Session::Ptr session;
    std::vector<std::unique_ptr<Connection>> discarded;  // closed outside the lock
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            while (allow_reuse && !idle_.empty()) {
                auto connection = std::move(idle_.back());
                idle_.pop_back();
                // Read the clock here: this loop may run again after waiting for a slot.
                bool expired = Clock::now() - connection->idle_since > settings_.idle_timeout;
                if (!expired && connection->probe_alive()) {
                    pool_counters().reused.fetch_add(1, std::memory_order_relaxed);
                    return Lease{std::move(connection), true, {}};
                }
                pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
                --open_;
                discarded.push_back(std::move(connection));
            }
            if (open_ < settings_.max_connections) break;
            if (!allow_reuse && !idle_.empty()) {
                // A resend needs a fresh connection: close an idle one to make room.
                discarded.push_back(std::move(idle_.front()));
                idle_.pop_front();
                --open_;
                continue;
            }
            if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled waiting for a pooled connection");
            auto limit = deadlines.connect_limit();
            if (Clock::now() >= limit)
                return Error(deadlines.total_by <= deadlines.connect_by ? ErrorCode::timeout_total
                                                                         : ErrorCode::pool_timeout,
                             "all " + std::to_string(settings_.max_connections) + " connections to " +
                                 key_.origin.origin() + " stayed busy");
            // Slices: a cancel has no way to notify this condition variable.
            slot_freed_.wait_for(lock, std::min<Clock::duration>(limit - Clock::now(), std::chrono::milliseconds(20)));
        }
        ++open_;
        if (key_.origin.https) {
            auto ctx = tls_context();
            if (!ctx) {
                --open_;
                return ctx.error();
            }
            context = ctx.value();
            session = tls_session_;
        }
    }
    discarded.clear();
    Lease lease;
    auto opened = open_connection(key_, context, session, deadlines, cancel, lease.timings);
    if (!opened) {
        release_slot();
        return opened.error();
    }
    pool_counters().created.fetch_add(1, std::memory_order_relaxed);
    lease.connection = std::move(opened.value());
    if (lease.connection->tls_session_reused())
        pool_counters().tls_resumed.fetch_add(1, std::memory_order_relaxed);
    return lease;
}

void OriginPool::checkin(std::unique_ptr<Connection> connection, bool reusable) {
    if (!connection) {
        release_slot();
        return;
    }
    Poco::Net::Session::Ptr session;
    if (reusable && connection->tls()) session = connection->tls_session();
    std::unique_ptr<Connection> expired;
    {
        std::lock_guard lock(mutex_);
        if (session) tls_session_ = session;
        if (reusable) {
            connection->idle_since = Clock::now();
            ++connection->requests_served;
            idle_.push_back(std::move(connection));
            // Reap the oldest idle connection if it has expired: bounded work per checkin.
            if (!idle_.empty() && Clock::now() - idle_.front()->idle_since > settings_.idle_timeout) {
                expired = std::move(idle_.front());
                idle_.pop_front();
                --open_;
                pool_counters().stale.fetch_add(1, std::memory_order_relaxed);
            }
        } else {
            --open_;
        }
        slot_freed_.notify_one();
    }
    // `connection` (if not reused) and `expired` close here, outside the lock.
}

void OriginPool::clear() {
    std::deque<std::unique_ptr<Connection>> closing;
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
    return {c.created.load(), c.reused.load(), c.stale.load(), c.resent.load(), c.tls_resumed.load()};
}

void pool_clear() {
    auto& r = detail::registry();
    std::vector<std::shared_ptr<detail::OriginPool>> pools;
    {
        std::lock_guard lock(r.mutex);
        for (auto& [k, p] : r.pools) pools.push_back(p);
    }
    for (auto& p : pools) p->clear();
}

}  // namespace nous::http
