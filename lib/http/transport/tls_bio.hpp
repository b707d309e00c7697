#pragma once
// The TLS record layer driven by us. POCO makes the SSL object and runs the
// handshake; from then on every SSL_read / SSL_write goes through a BIO of
// ours over the connection's socket instead of POCO's SecureSocketImpl
// (docs/design/tls.md):
//   - sends carry MSG_NOSIGNAL, so no TLS write can raise SIGPIPE and no
//     signal mask is touched per request (docs/design/poco-traps.md#sigpipe);
//   - each recv is bounded by the caller's idle and total deadlines, with no
//     poll of POCO's around it (docs/design/poco-traps.md#no-total-deadline);
//   - the connection decides when TCP_QUICKACK is armed.

#include <openssl/ssl.h>

#include <cstddef>

namespace nous::http::detail {

/// The socket under a TLS connection: one recv or send syscall per call.
class SocketIo {
  public:
    /// > 0: bytes read; 0: the peer closed; -1: failure, errno set (EAGAIN:
    /// nothing arrived in time, the read may be retried).
    virtual long socket_recv(char* buffer, std::size_t n) = 0;
    /// >= 0: bytes sent; -1: failure, errno set (EAGAIN: the send timed out).
    virtual long socket_send(const char* data, std::size_t n) = 0;
    virtual int socket_fd() const noexcept = 0;

  protected:
    ~SocketIo() = default;
};

/// Replaces the BIO under `ssl` (reads and writes) with one over `io`.
/// POCO's socket BIO, freed here, does not own the descriptor. The BIO does
/// not own `io`: it must outlive every use of `ssl`. False if OpenSSL
/// cannot allocate the BIO.
bool attach_socket_bio(SSL* ssl, SocketIo* io);

/// POCO 1.11 keeps its SSL object private (docs/design/poco-traps.md#ssl-object).
/// A capture armed on this thread records the SSL object that a handshake
/// running on this thread creates for `fd`; contexts made by
/// make_tls_context report every SSL object they drive through an info
/// callback (enable_ssl_capture).
class SslCapture {
  public:
    explicit SslCapture(int fd) noexcept;
    ~SslCapture();
    SslCapture(const SslCapture&) = delete;
    SslCapture& operator=(const SslCapture&) = delete;

    /// The SSL object seen for the descriptor, or null.
    SSL* ssl() const noexcept { return ssl_; }

  private:
    friend void on_ssl_info(const SSL* ssl, int where, int ret);
    int fd_;
    SSL* ssl_ = nullptr;
    SslCapture* previous_;
};

/// Installs the info callback that feeds SslCapture on `ctx`.
void enable_ssl_capture(SSL_CTX* ctx);

}  // namespace nous::http::detail
