#include "tls_fixture.hpp"

#include <Poco/Net/Context.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "fault_server.hpp"
#include "transport/sigpipe.hpp"

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

struct TlsServer::Impl {
    Poco::Net::Context::Ptr context;
    std::optional<Poco::Net::SecureServerSocket> listener;
    std::thread acceptor;
    std::atomic<bool> stopping{false};
    std::mutex mutex;
    std::list<std::pair<Poco::Net::StreamSocket, std::thread>> connections;
    std::string last_sni;  ///< guarded by mutex
};

int TlsServer::on_server_name(SSL_st* ssl, int*, void* self) {
    auto* server = static_cast<TlsServer*>(self);
    server->hellos_.fetch_add(1);
    if (const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) {
        std::lock_guard lock(server->impl_->mutex);
        server->impl_->last_sni = name;
        server->sni_handshakes_.fetch_add(1);
    }
    return SSL_TLSEXT_ERR_OK;
}

std::string TlsServer::last_sni() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->last_sni;
}

TlsServer::TlsServer(const std::string& cert_file, const std::string& key_file, Mode mode,
                     bool tls12_only)
    : impl_(std::make_unique<Impl>()) {
    Poco::Net::Context::Params params;
    params.privateKeyFile = key_file;
    params.certificateFile = cert_file;
    params.verificationMode = Poco::Net::Context::VERIFY_NONE;
    params.loadDefaultCAs = false;
    impl_->context = new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, params);
    impl_->context->enableSessionCache(true, "nous-test");
    // TLS 1.3 tickets let the client resume.
    SSL_CTX_set_num_tickets(impl_->context->sslContext(), 2);
    // OpenSSL's own group list, as nginx and most servers have it (POCO's server
    // context would put X448 first: docs/design/poco-traps.md#tls-groups).
    SSL_CTX_set1_groups_list(impl_->context->sslContext(), "X25519:P-256:X448:P-521:P-384");
    if (tls12_only) SSL_CTX_set_max_proto_version(impl_->context->sslContext(), TLS1_2_VERSION);
    SSL_CTX_set_tlsext_servername_callback(impl_->context->sslContext(),
                                           &TlsServer::on_server_name);
    SSL_CTX_set_tlsext_servername_arg(impl_->context->sslContext(), this);
    impl_->listener.emplace(Poco::Net::SocketAddress("127.0.0.1", 0), 64, impl_->context);
    port_ = impl_->listener->address().port();
    impl_->acceptor = std::thread([this, mode] {
        for (;;) {
            Poco::Net::StreamSocket socket;
            try {
                socket = impl_->listener->acceptConnection();
            } catch (...) {
                if (impl_->stopping) return;
                continue;  // a failed handshake from a rejecting client
            }
            if (impl_->stopping) return;
            accepted_.fetch_add(1);
            std::lock_guard lock(impl_->mutex);
            impl_->connections.emplace_back(
                socket, std::thread([this, socket, mode]() mutable {
                    Poco::Net::SecureStreamSocket secure(socket);
                    std::string buffer;
                    try {
                        secure.completeHandshake();
                        if (secure.sessionWasReused()) resumed_.fetch_add(1);
                        if (mode == Mode::reset_after_handshake) {
                            linger l{1, 0};
                            ::setsockopt(secure.impl()->sockfd(), SOL_SOCKET, SO_LINGER, &l,
                                         sizeof l);
                            ::shutdown(secure.impl()->sockfd(), SHUT_RDWR);
                            return;
                        }
                        for (;;) {
                            char chunk[16384];
                            int n = secure.receiveBytes(chunk, sizeof chunk);
                            if (n <= 0) return;
                            buffer.append(chunk, static_cast<std::size_t>(n));
                            auto end = buffer.find("\r\n\r\n");
                            if (end == std::string::npos) continue;
                            // Requests in these tests carry small bodies that arrive with the head.
                            buffer.clear();
                            const int fd = secure.impl()->sockfd();
                            if (mode == Mode::drip_record) {
                                // Raw bytes under the TLS layer: an application-data record
                                // header, then its payload far too slowly.
                                const unsigned char header[5] = {0x17, 0x03, 0x03, 0x40, 0x00};
                                if (::send(fd, header, sizeof header, MSG_NOSIGNAL) !=
                                    sizeof header)
                                    return;
                                for (int i = 0; i < 16384 && !impl_->stopping; ++i) {
                                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                    const char byte = 'x';
                                    if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) return;
                                }
                                return;
                            }
                            if (mode == Mode::silent) {
                                while (!impl_->stopping)
                                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                return;
                            }
                            if (mode == Mode::sse_then_reset) {
                                std::string head =
                                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                    "Transfer-Encoding: chunked\r\n\r\n" +
                                    nous::test::chunk("data: one\n\n");
                                secure.sendBytes(head.data(), static_cast<int>(head.size()));
                                linger l{1, 0};
                                ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                                secure.close();  // linger 0: the close is a reset
                                resets_.fetch_add(1);
                                return;
                            }
                            std::string response = ok_response("tls-ok");
                            if (mode == Mode::answer_then_unsolicited) {
                                int on = 1, off = 0;
                                ::setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
                                secure.sendBytes(response.data(),
                                                 static_cast<int>(response.size()));
                                std::string extra = ok_response("unsolicited");
                                secure.sendBytes(extra.data(), static_cast<int>(extra.size()));
                                ::setsockopt(fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
                                continue;
                            }
                            secure.sendBytes(response.data(), static_cast<int>(response.size()));
                            if (mode == Mode::answer_then_reset) {
                                linger l{1, 0};
                                ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                                secure.close();  // linger 0: the close is a reset
                                resets_.fetch_add(1);
                                return;
                            }
                        }
                    } catch (...) {
                    }
                }));
        }
    });
}

TlsServer::~TlsServer() {
    // Closing the server's TLS sockets writes close_notify through POCO,
    // without MSG_NOSIGNAL, on this (the test's) thread: a client already gone
    // makes that a SIGPIPE, left pending for a later test to receive.
    nous::http::detail::SigpipeGuard guard;
    impl_->stopping = true;
    // Wake accept() with a throwaway connection, then close the listener.
    try {
        Poco::Net::StreamSocket wake;
        wake.connect(Poco::Net::SocketAddress("127.0.0.1", port_));
    } catch (...) {
    }
    impl_->acceptor.join();
    impl_->listener->close();
    std::lock_guard lock(impl_->mutex);
    for (auto& [socket, thread] : impl_->connections) {
        ::shutdown(socket.impl()->sockfd(), SHUT_RDWR);
        thread.join();
    }
    impl_->connections.clear();  // the closes, inside the guard
}

}  // namespace nous::test
