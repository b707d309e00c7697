#pragma once
// The system trust store, as OpenSSL's defaults define it: the bundle file
// (SSL_CERT_FILE, else OpenSSL's default file, /etc/ssl/certs/ca-certificates.crt
// on Debian) and the hashed directory (SSL_CERT_DIR, else the default
// directory), both. OpenSSL's own default loading parses the whole bundle,
// ~140 certificates, into every new TLS context; libcurl 7.88 does it for
// every new connection. Here both are lookups, consulted only for an issuer
// a handshake needs: the directory by subject hash first, then the bundle,
// parsed at most once per process and only when the directory lacks an
// issuer (docs/design/poco-traps.md#tls-context).

#include <string>

// OpenSSL's own typedef, so that the curl backend can include this header
// without OpenSSL's.
typedef struct ssl_ctx_st SSL_CTX;

namespace nous::http::detail {

/// The bundle file and directory the system store is made of, as OpenSSL's
/// defaults resolve them now (environment first). Either may not exist.
struct SystemTrustPaths {
    std::string file;
    std::string dir;
};
SystemTrustPaths system_trust_paths();

/// Adds the system store to `ctx`. A context that trusts nothing yet gets the
/// process's shared store (no copy, no parse); one that already holds anchors
/// (a ca_file) gets the two lookups beside them, so that ca_file adds to the
/// system store.
void add_system_trust(SSL_CTX* ctx);

/// The same for a context whose owner may load more anchors into its store
/// after this call (libcurl): the lookups go into the context's own store,
/// never the shared one.
void add_system_trust_unshared(SSL_CTX* ctx);

/// Bundle files parsed so far in this process (tests: at most once per file,
/// and not at all while the directory has every issuer).
unsigned long system_bundle_parses();

}  // namespace nous::http::detail
