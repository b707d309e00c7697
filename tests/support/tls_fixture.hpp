#pragma once
// Test PKI made with the openssl CLI in a temporary folder, and a loopback
// TLS HTTP server whose modes are scripts of the fault server over TLS.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace nous::test {

struct TestPki {
    std::string dir;
    std::string ca_cert;                          ///< trusted test CA
    std::string localhost_cert, localhost_key;    ///< CN/SAN localhost, by the CA
    std::string ip_cert, ip_key;                  ///< SAN IP:127.0.0.1, by the CA
    std::string wrong_name_cert, wrong_name_key;  ///< SAN wrong.example, by the CA
    std::string rogue_cert, rogue_key;            ///< SAN localhost, by an untrusted CA
};

/// Generated once per test process.
const TestPki& test_pki();

class TlsServer {
  public:
    enum class Mode {
        answer,
        reset_after_handshake,
        /// After a request: a TLS record header announcing 16 KiB, then its
        /// bytes one every 20 ms (a record that never completes in time).
        drip_record,
        /// After a request: an SSE head and one event, then a reset.
        sse_then_reset,
        /// Answers one request, then resets the kept-alive connection.
        answer_then_reset,
        /// Reads the request and never answers (until the server stops).
        silent,
        /// Answers, and sends a second, unsolicited response as its own TLS
        /// record in the same TCP segment (corked): the client reads it
        /// ahead with the first, so only OpenSSL's buffer holds it.
        answer_then_unsolicited,
    };
    /// `tls12_only`: the server speaks at most TLS 1.2 (session resumption by
    /// session id / ticket as TLS 1.2 does it, instead of TLS 1.3 PSKs).
    TlsServer(const std::string& cert_file, const std::string& key_file, Mode mode = Mode::answer,
              bool tls12_only = false);
    ~TlsServer();
    std::uint16_t port() const { return port_; }
    /// TCP connections accepted (failed handshakes included).
    std::uint64_t connections() const;
    std::uint64_t handshakes_resumed() const { return resumed_.load(); }
    /// sse_then_reset: connections reset so far.
    std::uint64_t resets() const { return resets_.load(); }
    /// Handshakes whose ClientHello carried a server name (SNI), and the last such name.
    std::uint64_t sni_handshakes() const { return sni_handshakes_.load(); }
    std::string last_sni() const;
    /// Every handshake that completed (with or without SNI).
    std::uint64_t hello_count() const { return hellos_.load(); }

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::uint16_t port_ = 0;
    std::atomic<std::uint64_t> resumed_{0};
    std::atomic<std::uint64_t> resets_{0};
    std::atomic<std::uint64_t> sni_handshakes_{0};
    std::atomic<std::uint64_t> hellos_{0};
};

}  // namespace nous::test
