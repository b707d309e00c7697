#pragma once
// Connecting to a resolved name: Happy Eyeballs (RFC 8305). POCO connects to
// one address with the whole timeout (docs/design/poco-traps.md#resolver):
// an address that drops SYNs (a broken IPv6 route, a dead load-balancer
// member) would use the whole connect budget although the next one works.

#include <Poco/Net/StreamSocket.h>

#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "transport/resolver.hpp"

namespace nous::http::detail {

/// What a new socket gets before its SYN.
struct SocketSetup {
    int receive_buffer_bytes = 0;  ///< SO_RCVBUF (0: the kernel's)
    bool tcp_nodelay = true;
};

/// The addresses in the order they are tried: families interleaved, starting
/// with the family of the resolver's first choice (RFC 8305 section 4).
std::vector<ResolvedAddress> interleave_families(const std::vector<ResolvedAddress>& addresses);

/// Connects to one of `addresses` under the connect deadline: attempts start
/// limits::connection_attempt_delay apart, or at once when the previous one failed;
/// the first to connect wins and the others are closed. Errors: cancelled,
/// the connect timeout code (naming the addresses still pending),
/// connect_failed (every address refused or unreachable; also a socket() that
/// fails, EMFILE or ENFILE). `peer` names the target in messages. Every fd is
/// registered with `cancel` while it connects.
Result<Poco::Net::StreamSocket> dial(const std::vector<ResolvedAddress>& addresses,
                                     const SocketSetup& setup, const std::string& peer,
                                     const Deadlines& deadlines, const CancelToken* cancel);

}  // namespace nous::http::detail
