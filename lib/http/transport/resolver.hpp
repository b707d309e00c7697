#pragma once
// Name resolution under the connect deadline. POCO's SocketAddress(host, port)
// calls a blocking getaddrinfo no timeout covers and keeps only the first
// address (docs/design/poco-traps.md#resolver): we resolve ourselves, keep every
// address, and bound the wait.

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "nous/http/result.hpp"

namespace nous::http::detail {

struct ResolvedAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;
    int family() const noexcept { return storage.ss_family; }
    std::string to_string() const;
};

/// Every address of host:port, in the resolver's preferred order; a host
/// resolved in the last 60 s comes from a small cache (as curl's DNS cache).
/// Errors: dns_failed, cancelled, or `deadlines.connect_timeout_code()` past
/// the limit. Failures are not cached.
Result<std::vector<ResolvedAddress>> resolve(const std::string& host, std::uint16_t port,
                                             const Deadlines& deadlines, const CancelToken* cancel);

/// Forgets every cached resolution (tests).
void clear_dns_cache();

/// Forgets the cached addresses of host:port (every one of them failed).
void forget_resolution(const std::string& host, std::uint16_t port);

/// Test seam: replaces getaddrinfo for names (not IP literals). Returns a
/// getaddrinfo code (0: `out` holds the addresses). Empty: the real resolver.
using ResolverFunction = std::function<int(const std::string& host, std::uint16_t port,
                                           std::vector<ResolvedAddress>& out)>;
void set_resolver_for_tests(ResolverFunction resolver);

}  // namespace nous::http::detail
