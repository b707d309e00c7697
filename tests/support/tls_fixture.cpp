#include "tls_fixture.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "fault_server.hpp"

namespace nous::test {

namespace {

void run(const std::string& command) {
    std::string full = command + " >/dev/null 2>&1";
    if (std::system(full.c_str()) != 0)
        throw std::runtime_error("test PKI command failed: " + command);
}

void make_leaf(const std::string& dir, const std::string& name, const std::string& san,
               const std::string& ca) {
    std::ofstream(dir + "/" + name + ".ext")
        << "subjectAltName=" << san << "\nbasicConstraints=CA:FALSE\n";
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + dir + "/" +
        name + ".key -out " + dir + "/" + name + ".csr -subj /CN=" + name);
    run("openssl x509 -req -in " + dir + "/" + name + ".csr -CA " + dir + "/" + ca +
        ".pem -CAkey " + dir + "/" + ca + ".key -CAcreateserial -out " + dir + "/" + name +
        ".pem -days 2 -extfile " + dir + "/" + name + ".ext");
}

void make_ca(const std::string& dir, const std::string& name) {
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + dir +
        "/" + name + ".key -out " + dir + "/" + name + ".pem -days 2 -subj /CN=" + name +
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
}

TestPki build_pki() {
    char tmpl[] = "/tmp/nous-pki-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    TestPki pki;
    pki.dir = tmpl;
    make_ca(pki.dir, "testca");
    make_ca(pki.dir, "rogueca");
    make_leaf(pki.dir, "localhost", "DNS:localhost", "testca");
    make_leaf(pki.dir, "ip", "IP:127.0.0.1", "testca");
    make_leaf(pki.dir, "wrong", "DNS:wrong.example", "testca");
    make_leaf(pki.dir, "rogue", "DNS:localhost", "rogueca");
    pki.ca_cert = pki.dir + "/testca.pem";
    auto leaf = [&](const char* n, std::string& cert, std::string& key) {
        cert = pki.dir + "/" + n + ".pem";
        key = pki.dir + "/" + n + ".key";
    };
    leaf("localhost", pki.localhost_cert, pki.localhost_key);
    leaf("ip", pki.ip_cert, pki.ip_key);
    leaf("wrong", pki.wrong_name_cert, pki.wrong_name_key);
    leaf("rogue", pki.rogue_cert, pki.rogue_key);
    return pki;
}

}  // namespace

const TestPki& test_pki() {
    static const TestPki pki = build_pki();
    return pki;
}

namespace {

/// close_notify, then a reset: what a TLS server that closes with linger 0
/// sends (the response before it is readable; the reset then hits the
/// client's next write).
void close_notify_then_reset(Peer& peer) {
    SSL_shutdown(peer.ssl());
    peer.reset();
}

/// What each mode does after the handshake: a FaultServer script over TLS.
FaultServer::Script script_for(TlsServer::Mode mode, std::atomic<std::uint64_t>& resets) {
    using Mode = TlsServer::Mode;
    return [mode, &resets](Peer& peer, std::uint64_t) {
        if (mode == Mode::reset_after_handshake) return peer.reset();
        // Requests in these tests carry small bodies that arrive with the head.
        while (peer.read_request()) {
            switch (mode) {
                case Mode::drip_record: {
                    // Raw bytes under the TLS layer: an application-data record
                    // header, then its payload far too slowly.
                    const unsigned char header[5] = {0x17, 0x03, 0x03, 0x40, 0x00};
                    if (::send(peer.fd(), header, sizeof header, MSG_NOSIGNAL) != sizeof header)
                        return;
                    for (int i = 0; i < 16384 && !peer.stopping(); ++i) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                        const char byte = 'x';
                        if (::send(peer.fd(), &byte, 1, MSG_NOSIGNAL) != 1) return;
                    }
                    return;
                }
                case Mode::silent:
                    return peer.stall();
                case Mode::sse_then_reset:
                    peer.send(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n" +
                        chunk("data: one\n\n"));
                    resets.fetch_add(1);
                    return close_notify_then_reset(peer);
                case Mode::answer_then_unsolicited: {
                    // Two records in one TCP segment (corked): the client reads
                    // the second ahead with the first.
                    int on = 1, off = 0;
                    ::setsockopt(peer.fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on);
                    peer.send(ok_response("tls-ok"));
                    peer.send(ok_response("unsolicited"));
                    ::setsockopt(peer.fd(), IPPROTO_TCP, TCP_CORK, &off, sizeof off);
                    break;
                }
                case Mode::answer_then_reset:
                    peer.send(ok_response("tls-ok"));
                    resets.fetch_add(1);
                    return close_notify_then_reset(peer);
                default:
                    if (!peer.send(ok_response("tls-ok"))) return;
            }
        }
    };
}

}  // namespace

struct TlsServer::Impl {
    std::mutex mutex;
    std::string last_sni;  ///< guarded by mutex
    std::optional<FaultServer> server;
};

TlsServer::TlsServer(const std::string& cert_file, const std::string& key_file, Mode mode,
                     bool tls12_only)
    : impl_(std::make_unique<Impl>()) {
    ServerTls tls;
    tls.cert_file = cert_file;
    tls.key_file = key_file;
    tls.tls12_only = tls12_only;
    tls.on_handshake = [this](SSL* ssl) {
        hellos_.fetch_add(1);
        if (SSL_session_reused(ssl)) resumed_.fetch_add(1);
        if (const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) {
            std::lock_guard lock(impl_->mutex);
            impl_->last_sni = name;
            sni_handshakes_.fetch_add(1);
        }
    };
    impl_->server.emplace(script_for(mode, resets_), std::move(tls));
    port_ = impl_->server->port();
}

TlsServer::~TlsServer() { impl_->server.reset(); }

std::uint64_t TlsServer::connections() const { return impl_->server->connections(); }

std::string TlsServer::last_sni() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->last_sni;
}

}  // namespace nous::test
