#pragma once
// The system trust store without parsing it. OpenSSL's default loading
// (SSL_CTX_set_default_verify_paths) parses the whole bundle file, ~140
// certificates and ~60 ms on Debian 12, into every new TLS context; libcurl
// 7.88 does the same for every new connection. A hashed certificate
// directory holds the same certificates and is searched lazily, only for the
// issuers a handshake needs (docs/design/poco-traps.md#tls-context).

#include <string>

// OpenSSL's own typedef, so that the curl backend can include this header
// without OpenSSL's.
typedef struct ssl_ctx_st SSL_CTX;

namespace nous::http::detail {

/// The system certificate directory, resolved, when it can stand for the
/// whole system store: OpenSSL's default file and directory are in use
/// (SSL_CERT_FILE / SSL_CERT_DIR unset or naming them), and the directory
/// holds subject-hash links (on Debian, update-ca-certificates makes the
/// bundle and the links from the same certificates). Empty otherwise.
std::string lazy_system_cert_dir();

/// Adds the system store to `ctx`: the lazy directory when there is one,
/// else OpenSSL's default file and directory.
void add_system_trust(SSL_CTX* ctx);

}  // namespace nous::http::detail
