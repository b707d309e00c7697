#pragma once
// The TLS session a reference client offers to its next connection (ref-openssl, ref-beast).

#include <openssl/ssl.h>

#include <cstdint>
#include <cstdio>

#include "client.hpp"

namespace bench {

/// The TLS session a reference client offers to its next connection, and
/// how many of its handshakes resumed one (printed with --new-connection).
struct SessionKeeper {
    const char* client;
    SSL_SESSION* session = nullptr;
    std::uint64_t handshakes = 0, resumed = 0;
    explicit SessionKeeper(const char* name) : client(name) {}
    ~SessionKeeper() {
        if (g_tls.new_connection && handshakes > 1)
            std::fprintf(stderr, "%s: %llu of %llu handshakes resumed a session\n", client,
                         static_cast<unsigned long long>(resumed),
                         static_cast<unsigned long long>(handshakes));
        release();
    }
    /// Frees the kept session (before its SSL_CTX goes).
    void release() {
        if (session) SSL_SESSION_free(session);
        session = nullptr;
    }
    /// Before the handshake: offer the kept session (unless --no-resume).
    void offer(SSL* ssl) const {
        if (session && !g_tls.no_resume) SSL_set_session(ssl, session);
    }
    void handshook(SSL* ssl) {
        ++handshakes;
        if (SSL_session_reused(ssl)) ++resumed;
    }
    /// Keeps the connection's session (TLS 1.3 tickets arrive after the
    /// handshake), then sends close_notify: OpenSSL marks the session of a
    /// connection freed without it as not resumable.
    void keep_and_shut_down(SSL* ssl) {
        if (SSL_SESSION* s = SSL_get1_session(ssl)) {
            if (session) SSL_SESSION_free(session);
            session = s;
        }
        SSL_shutdown(ssl);
    }
};

}  // namespace bench
