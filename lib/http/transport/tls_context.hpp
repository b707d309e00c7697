#pragma once
// The TLS policy of one origin as a POCO Context: verification against the
// system store plus `ca_file`, host name checked by OpenSSL inside the
// handshake, TLS >= 1.2, X25519 first, session cache on.

#include <Poco/Net/Context.h>

#include "transport/connection_key.hpp"

namespace nous::http::detail {

/// Throws Poco::Exception when OpenSSL refuses the settings (a bad ca_file).
Poco::Net::Context::Ptr make_tls_context(const ConnectionKey& key);

}  // namespace nous::http::detail
