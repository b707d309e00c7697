// Name resolution under the connect deadline, with a small cache.

#include "transport/resolver.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <cctype>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/cancel.hpp"
#include "core/limits.hpp"

namespace nous::http::detail {

std::string ResolvedAddress::to_string() const {
    char text[INET6_ADDRSTRLEN] = {0};
    if (storage.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(storage).sin_addr, text,
                  sizeof text);
    else
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr, text,
                  sizeof text);
    return text;
}

namespace {

struct Lookup {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    int rc = 0;
    std::vector<ResolvedAddress> addresses;
};

std::vector<ResolvedAddress> collect(const addrinfo* list) {
    std::vector<ResolvedAddress> out;
    for (const addrinfo* ai = list; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
        ResolvedAddress a;
        std::memcpy(&a.storage, ai->ai_addr, ai->ai_addrlen);
        a.length = ai->ai_addrlen;
        out.push_back(a);
    }
    return out;
}

int run_getaddrinfo(const std::string& host, std::uint16_t port, int flags,
                    std::vector<ResolvedAddress>& out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = flags;
    addrinfo* list = nullptr;
    std::string service = std::to_string(port);
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
    if (rc == 0) {
        out = collect(list);
        ::freeaddrinfo(list);
    }
    return rc;
}

/// A plain dotted-quad or IPv6 literal, read without getaddrinfo: glibc's
/// numeric path still walks several KB of stack and a few allocations on
/// every stream's thread, a stack page of resident memory per stream.
std::optional<ResolvedAddress> literal_address(const std::string& host, std::uint16_t port) {
    ResolvedAddress a;
    auto& v4 = reinterpret_cast<sockaddr_in&>(a.storage);
    if (::inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        a.length = sizeof v4;
        return a;
    }
    auto& v6 = reinterpret_cast<sockaddr_in6&>(a.storage);
    if (::inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        a.length = sizeof v6;
        return a;
    }
    return std::nullopt;
}

/// The other numeric forms getaddrinfo accepts (inet_aton's "127.1",
/// "0x7f.0.0.1"; IPv6 with a scope, "fe80::1%eth0"): hex digits, dots and an
/// "x", or a colon. Any other name goes straight to the cache and the lookup.
bool may_be_numeric(const std::string& host) {
    if (host.find(':') != std::string::npos) return true;
    for (char c : host)
        if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'x' && c != 'X')
            return false;
    return !host.empty();
}

/// Successful lookups, kept 60 s as curl's DNS cache keeps them: a new
/// connection to a known host skips the resolver thread and getaddrinfo's
/// reading of /etc/hosts, nsswitch.conf and resolv.conf.
struct DnsCache {
    static constexpr auto ttl = limits::dns_cache_ttl;
    static constexpr std::size_t max_entries = limits::dns_cache_entries;
    std::mutex mutex;
    std::map<std::string, std::pair<Clock::time_point, std::vector<ResolvedAddress>>>
        entries;  ///< guarded by mutex
};

DnsCache& dns_cache() {
    static auto* cache = new DnsCache;  // never destroyed: lookups may run during exit
    return *cache;
}

std::string cache_key(const std::string& host, std::uint16_t port) {
    return host + ":" + std::to_string(port);
}

}  // namespace

void forget_resolution(const std::string& host, std::uint16_t port) {
    auto& cache = dns_cache();
    std::lock_guard lock(cache.mutex);
    cache.entries.erase(cache_key(host, port));
}

namespace {
std::mutex g_seam_mutex;
ResolverFunction g_seam;  ///< guarded by g_seam_mutex

ResolverFunction resolver_seam() {
    std::lock_guard lock(g_seam_mutex);
    return g_seam;
}
}  // namespace

void set_resolver_for_tests(ResolverFunction resolver) {
    std::lock_guard lock(g_seam_mutex);
    g_seam = std::move(resolver);
}

void clear_dns_cache() {
    auto& cache = dns_cache();
    std::lock_guard lock(cache.mutex);
    cache.entries.clear();
}

Result<std::vector<ResolvedAddress>> resolve(const std::string& host, std::uint16_t port,
                                             const Deadlines& deadlines,
                                             const CancelToken* cancel) {
    if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled before resolving");
    // IP literals need no lookup and no thread.
    if (auto literal = literal_address(host, port)) return std::vector<ResolvedAddress>{*literal};
    std::vector<ResolvedAddress> literal;
    if (may_be_numeric(host) &&
        run_getaddrinfo(host, port, AI_NUMERICHOST | AI_NUMERICSERV, literal) == 0 &&
        !literal.empty())
        return literal;
    const std::string key = cache_key(host, port);
    {
        auto& cache = dns_cache();
        std::lock_guard lock(cache.mutex);
        auto it = cache.entries.find(key);
        if (it != cache.entries.end()) {
            if (Clock::now() < it->second.first) return it->second.second;
            cache.entries.erase(it);
        }
    }

    // getaddrinfo cannot be interrupted or bounded: run it on a detached
    // thread that owns its state, and wait for it under the deadline.
    auto lookup = std::make_shared<Lookup>();
    try {
        std::thread([lookup, host, port, seam = resolver_seam()] {
            std::vector<ResolvedAddress> found;
            int rc = seam ? seam(host, port, found)
                          : run_getaddrinfo(host, port, AI_ADDRCONFIG | AI_NUMERICSERV, found);
            std::lock_guard lock(lookup->mutex);
            lookup->rc = rc;
            lookup->addresses = std::move(found);
            lookup->done = true;
            lookup->done_cv.notify_all();
        }).detach();
    } catch (const std::system_error& e) {
        return Error(ErrorCode::saturated,
                     std::string("cannot start a resolver thread: ") + e.what());
    }
    const auto limit = deadlines.connect_limit();
    // Until the lookup ends, the deadline, or a cancel, which notifies this
    // wait (registered before the lookup's lock, and gone after it).
    CancelWakeup wake_on_cancel(cancel, lookup->mutex, lookup->done_cv);
    std::unique_lock lock(lookup->mutex);
    while (!lookup->done) {
        if (is_cancelled(cancel))
            return Error(ErrorCode::cancelled, "cancelled while resolving " + host);
        if (Clock::now() >= limit)
            return Error(deadlines.connect_timeout_code(), "timed out resolving " + host);
        lookup->done_cv.wait_until(lock, limit);
    }
    if (lookup->rc != 0)
        return Error(ErrorCode::dns_failed,
                     "cannot resolve " + host + ": " + ::gai_strerror(lookup->rc));
    if (lookup->addresses.empty())
        return Error(ErrorCode::dns_failed, "no IPv4 or IPv6 address for " + host);
    {
        auto& cache = dns_cache();
        std::lock_guard lock(cache.mutex);
        if (cache.entries.size() >= DnsCache::max_entries)
            cache.entries.clear();  // bounded, simply
        cache.entries[key] = {Clock::now() + DnsCache::ttl, lookup->addresses};
    }
    return std::move(lookup->addresses);
}

}  // namespace nous::http::detail
