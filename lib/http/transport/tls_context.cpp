// The TLS policy of one origin as a POCO Context.

#include "transport/tls_context.hpp"

#include <Poco/Net/SSLException.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/url.hpp"
#include "transport/tls_bio.hpp"
#include "transport/trust_store.hpp"

namespace nous::http::detail {

using Poco::Net::Context;

Context::Ptr make_tls_context(const ConnectionKey& key) {
    Context::Params params;
    params.caLocation = key.ca_file;
    // Relaxed + SSL_VERIFY_PEER: the chain is verified in the handshake.
    params.verificationMode = key.insecure ? Context::VERIFY_NONE : Context::VERIFY_RELAXED;
    params.verificationDepth = 9;
    // POCO's default loadDefaultCAs=false means no trust anchors at all
    // (docs/design/poco-traps.md#tls-context); its true parses the whole
    // system bundle into every context. add_system_trust below does it lazily.
    params.loadDefaultCAs = false;
    params.cipherList = "HIGH:!aNULL:!eNULL:!MD5:!RC4";
    Context::Ptr context = new Context(Context::TLS_CLIENT_USE, params);
    context->requireMinimumProtocol(Context::PROTO_TLSV1_2);
    // POCO's Context sets the key-exchange groups to its ecdhCurve parameter,
    // X448 first by default, so the client's one key share is X448: offer
    // X25519 first, as OpenSSL itself does, the group servers prefer
    // (docs/design/poco-traps.md#tls-groups).
    SSL_CTX_set1_groups_list(context->sslContext(), "X25519:P-256:X448:P-384:P-521");
    // TLS sessions are resumed per origin: POCO turns the client cache off by
    // default (docs/design/poco-traps.md#tls-session-cache).
    context->enableSessionCache(true);
    // POCO's own host check runs after connect, skips loopback hosts unless
    // VERIFY_STRICT, and passes vacuously after a timed-out handshake
    // (docs/design/poco-traps.md#tls-handshake-timeout). OpenSSL checks the
    // host inside the handshake instead.
    context->enableExtendedCertificateVerification(false);
    SSL_CTX* raw = context->sslContext();
    add_system_trust(raw);
    // Reads and writes after the handshake are ours, on POCO's SSL object
    // (transport/tls_bio.hpp): let the connection find it.
    enable_ssl_capture(raw);
    // One recv takes a whole record and whatever follows it, instead of a
    // 5-byte record header and then its body: half the reads.
    SSL_CTX_set_read_ahead(raw, 1);
    if (!key.insecure) {
        // Replace POCO's verify callback (routed through SSLManager events) with
        // OpenSSL's own decision.
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
        X509_VERIFY_PARAM* param = SSL_CTX_get0_param(raw);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = is_ip_literal(key.origin.host)
                     ? X509_VERIFY_PARAM_set1_ip_asc(param, key.origin.host.c_str())
                     : X509_VERIFY_PARAM_set1_host(param, key.origin.host.c_str(), 0);
        if (ok != 1) throw Poco::Net::SSLException("cannot set the expected host name");
    }
    return context;
}

}  // namespace nous::http::detail
