// Opening a connection: resolve, dial, tunnel, TLS handshake; the per-origin connector.

#include "transport/connector.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureStreamSocket.h>

#include <string>

#include "core/cancel.hpp"
#include "core/log.hpp"
#include "transport/dialer.hpp"
#include "transport/proxy_tunnel.hpp"
#include "transport/resolver.hpp"
#include "transport/sigpipe.hpp"
#include "transport/socket_interrupt.hpp"
#include "transport/tls_context.hpp"

namespace nous::http::detail {

using Poco::Net::Context;
using Poco::Net::SecureStreamSocket;
using Poco::Net::StreamSocket;

namespace {

std::chrono::microseconds since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
}

/// The TLS handshake on a connected socket, in a frame of its own: a
/// plain connection's open never has it (nor its error paths' temporaries)
/// on the stack, and a stream's thread keeps every page it touched.
[[gnu::noinline]] Result<std::unique_ptr<Connection>> handshake(
    StreamSocket& socket, int fd, const ConnectionKey& key, Context::Ptr tls_context,
    Poco::Net::Session::Ptr tls_session, const Deadlines& deadlines, const CancelToken* cancel,
    ConnectTimings& timings, bool via_proxy) {
    // POCO's handshake writes through OpenSSL's socket BIO, without
    // MSG_NOSIGNAL; so does the close of a socket whose handshake failed
    // (docs/design/poco-traps.md#sigpipe).
    SigpipeGuard guard;
    SslCapture capture(fd);
    auto t2 = Clock::now();
    auto handshake_budget = [&] {
        int ms = millis_until(deadlines.connect_limit());
        return Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(std::max(ms, 1)) * 1000);
    };
    try {
        socket.setReceiveTimeout(handshake_budget());
        socket.setSendTimeout(handshake_budget());
        // A host name makes POCO send it as SNI (docs/design/poco-traps.md#sni);
        // an IP literal is never sent (RFC 6066 section 3 forbids it). The host
        // check is the context's either way (X509_check_host / X509_check_ip).
        SecureStreamSocket secure =
            is_ip_literal(key.origin.host)
                ? SecureStreamSocket::attach(socket, tls_context, tls_session)
                : SecureStreamSocket::attach(socket, key.origin.host, tls_context, tls_session);
        // A handshake that times out inside attach is reported as success
        // (docs/design/poco-traps.md#tls-handshake-timeout): finish it explicitly and check.
        secure.setReceiveTimeout(handshake_budget());
        int rc = secure.completeHandshake();
        if (is_cancelled(cancel))
            return Error(ErrorCode::cancelled, "cancelled during the TLS handshake");
        if (rc != 1)
            return Error(Clock::now() >= deadlines.connect_limit()
                             ? deadlines.connect_timeout_code()
                             : ErrorCode::tls_failed,
                         "TLS handshake with " + key.origin.host + " did not complete");
        timings.tls = since(t2);
        if (capture.ssl() == nullptr)
            return Error(ErrorCode::tls_failed,
                         "TLS with " + key.origin.host +
                             ": the handshake's SSL object was not seen (context without capture)");
        auto connection = std::make_unique<Connection>(secure, capture.ssl(), via_proxy);
        if (!connection->take_over_tls())
            return Error(ErrorCode::tls_failed,
                         "TLS with " + key.origin.host + ": cannot allocate an OpenSSL BIO");
        if (key.insecure)
            warn_once(
                "insecure:" + key.origin.origin(),
                "TLS certificate verification is OFF for " + key.origin.origin() + " (insecure)");
        return connection;
    } catch (const Poco::TimeoutException&) {
        return Error(deadlines.connect_timeout_code(),
                     "timed out in the TLS handshake with " + key.origin.host);
    } catch (const Poco::Exception& e) {
        if (is_cancelled(cancel))
            return Error(ErrorCode::cancelled, "cancelled during the TLS handshake");
        if (Clock::now() >= deadlines.connect_limit())
            return Error(deadlines.connect_timeout_code(),
                         "timed out in the TLS handshake with " + key.origin.host);
        // what() is only the class name in POCO: use displayText().
        return Error(ErrorCode::tls_failed,
                     "TLS handshake with " + key.origin.host + " failed: " + e.displayText());
    }
}

}  // namespace

Result<std::unique_ptr<Connection>> open_connection(
    const ConnectionKey& key, Context::Ptr tls_context, Poco::Net::Session::Ptr tls_session,
    const Deadlines& deadlines, const CancelToken* cancel, ConnectTimings& timings) {
    std::optional<Url> proxy;
    if (!key.proxy.empty()) {
        auto parsed = parse_url(key.proxy);
        if (!parsed) return parsed.error();
        proxy = std::move(parsed.value());
    }
    const Url& peer = proxy ? *proxy : key.origin;
    auto t0 = Clock::now();
    auto addresses = resolve(peer.host, peer.port, deadlines, cancel);
    timings.resolve = since(t0);
    if (!addresses) return addresses.error();

    auto t1 = Clock::now();
    auto connected = dial(addresses.value(), SocketSetup{key.receive_buffer_bytes, key.tcp_nodelay},
                          peer.host + ":" + std::to_string(peer.port), deadlines, cancel);
    if (!connected) {
        // Every cached address failed: the next attempt resolves the name
        // afresh instead of trying the same dead addresses for the cache's TTL.
        if (connected.error().code != ErrorCode::cancelled) forget_resolution(peer.host, peer.port);
        return connected.error();
    }
    timings.connect = since(t1);
    StreamSocket socket = connected.value();
    int fd = socket.impl()->sockfd();
    SocketRegistration registration(cancel, fd);

    if (proxy && key.origin.https) {
        if (auto e = open_tunnel(socket, key, *proxy, deadlines, cancel)) return *e;
    }
    if (!key.origin.https) return std::make_unique<Connection>(socket, nullptr, proxy.has_value());

    return handshake(socket, fd, key, std::move(tls_context), std::move(tls_session), deadlines,
                     cancel, timings, proxy.has_value());
}

Result<std::unique_ptr<Transport>> PocoConnector::connect(const Deadlines& deadlines,
                                                          const CancelToken* cancel,
                                                          ConnectTimings& timings) {
    Context::Ptr context;
    Poco::Net::Session::Ptr session;
    if (key_.origin.https) {
        std::lock_guard lock(mutex_);
        if (!tls_context_) {
            try {
                tls_context_ = make_tls_context(key_);
            } catch (const Poco::Exception& e) {
                return Error(ErrorCode::tls_failed, "TLS setup failed: " + e.displayText());
            }
        }
        context = tls_context_;
        session = tls_session_;
    }
    auto opened = open_connection(key_, context, session, deadlines, cancel, timings);
    if (!opened) return opened.error();
    return std::unique_ptr<Transport>(std::move(opened.value()));
}

void PocoConnector::forget_tls_session() {
    std::lock_guard lock(mutex_);
    tls_session_ = nullptr;
}

void PocoConnector::on_reusable(Transport& transport) {
    if (!transport.tls()) return;
    // Only this connector makes the transports of its pool.
    Poco::Net::Session::Ptr session = static_cast<Connection&>(transport).tls_session_if_new();
    if (!session) return;
    std::lock_guard lock(mutex_);
    tls_session_ = session;
}

}  // namespace nous::http::detail
