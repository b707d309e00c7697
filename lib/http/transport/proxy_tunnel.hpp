#pragma once
// The CONNECT exchange with an HTTP proxy, after which the socket carries a
// tunnel to the origin (https through a proxy).

#include <Poco/Net/StreamSocket.h>

#include <optional>

#include "core/url.hpp"
#include "transport/connection_key.hpp"
#include "transport/transport.hpp"

namespace nous::http::detail {

/// CONNECT host:port through `proxy` on a connected socket, under the connect
/// deadline; bytes after the proxy's head are left for the tunnel.
std::optional<Error> open_tunnel(Poco::Net::StreamSocket& socket, const ConnectionKey& key,
                                 const Url& proxy, const Deadlines& deadlines,
                                 const CancelToken* cancel);

}  // namespace nous::http::detail
