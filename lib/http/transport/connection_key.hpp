#pragma once
// The pool key: everything that selects a connection. Pooled connections
// serve only calls with the same key (a session opened with `insecure` never
// serves a verifying call, one that trusts a ca_file never serves one that
// does not).

#include <string>

#include "core/url.hpp"
#include "nous/http/options.hpp"

namespace nous::http::detail {

/// Everything that selects a connection: pooled connections serve only calls
/// with the same key (a session opened with `insecure` never serves a verifying call).
struct ConnectionKey {
    Url origin;
    std::string proxy;  ///< proxy URL or empty
    std::string ca_file;
    bool insecure = false;
    int receive_buffer_bytes = 0;
    bool tcp_nodelay = true;

    /// The key of a call: its origin, its proxy and its connection settings.
    static ConnectionKey for_call(const Url& origin, const std::string& proxy,
                                  const Options& options);
    /// Whether a call would get this key, without building one (the per-thread
    /// pool cache asks on every call). Every field is compared, beside
    /// for_call and to_string: a field forgotten here would let a call reuse
    /// a pool with other TLS or socket settings.
    bool matches(const Url& origin, const std::string& proxy,
                 const Options& options) const noexcept;
    /// The name of its pool (every field).
    std::string to_string() const;
};

}  // namespace nous::http::detail
