// ref-openssl: the TLS limit, raw OpenSSL over the raw client's socket and parser.

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "client.hpp"
#include "ref_raw.hpp"
#include "session_keeper.hpp"

namespace bench {

namespace {

/// The TLS limit: raw OpenSSL over the raw client's socket and parser. The
/// chain and host name verified, TLS >= 1.2, SNI, and the session of the last
/// connection offered to the next one.
struct OpenSslClient : RawClient {
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    SessionKeeper sessions{"ref-openssl"};
    explicit OpenSslClient(bool nd) : RawClient(nd, false) {
        ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
        SSL_CTX_set_default_verify_paths(ctx);
        if (!g_tls.cacert.empty())
            SSL_CTX_load_verify_locations(ctx, g_tls.cacert.c_str(), nullptr);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT);
    }
    ~OpenSslClient() override {
        drop();
        sessions.release();
        SSL_CTX_free(ctx);
    }
    void drop() {
        if (!ssl) return;
        sessions.keep_and_shut_down(ssl);
        SSL_free(ssl);
        ssl = nullptr;
    }
    void closing() override { drop(); }
    void connected(const Poco::URI& uri) override {
        drop();
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        SSL_set_tlsext_host_name(ssl, uri.getHost().c_str());
        SSL_set1_host(ssl, uri.getHost().c_str());
        sessions.offer(ssl);
        if (SSL_connect(ssl) != 1) abort_run("ref-openssl: handshake failed");
        sessions.handshook(ssl);
    }
    ssize_t receive(char* p, std::size_t n) override {
        for (;;) {
            int got = SSL_read(ssl, p, static_cast<int>(n));
            if (got > 0) return got;
            if (SSL_get_error(ssl, got) != SSL_ERROR_WANT_READ) return -1;
        }
    }
    bool send_request(const std::string& head, const std::string& body) override {
        const std::string all = head + body;  // one record for a small request
        return SSL_write(ssl, all.data(), static_cast<int>(all.size())) ==
               static_cast<int>(all.size());
    }
};

}  // namespace

std::unique_ptr<Client> make_openssl_client(bool nodelay) {
    return std::make_unique<OpenSslClient>(nodelay);
}

}  // namespace bench
