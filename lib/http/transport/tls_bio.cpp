// Our OpenSSL BIO: TLS reads and writes with our deadlines and MSG_NOSIGNAL.

#include "transport/tls_bio.hpp"

#include <openssl/bio.h>

#include <cerrno>

namespace nous::http::detail {

namespace {

SocketIo* io_of(BIO* bio) { return static_cast<SocketIo*>(BIO_get_data(bio)); }

int bio_read(BIO* bio, char* out, int length) {
    BIO_clear_retry_flags(bio);
    if (length <= 0) return 0;
    for (;;) {
        long n = io_of(bio)->socket_recv(out, static_cast<std::size_t>(length));
        if (n > 0) return static_cast<int>(n);
        if (n == 0) {
            // OpenSSL asks BIO_eof() to tell a peer's close from a failed read.
            BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
            return 0;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
        return -1;
    }
}

int bio_write(BIO* bio, const char* data, int length) {
    BIO_clear_retry_flags(bio);
    if (length <= 0) return 0;
    for (;;) {
        long n = io_of(bio)->socket_send(data, static_cast<std::size_t>(length));
        if (n >= 0) return static_cast<int>(n);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
        return -1;
    }
}

long bio_ctrl(BIO* bio, int command, long, void* pointer) {
    switch (command) {
        case BIO_CTRL_FLUSH:  // every write is already a syscall
        case BIO_CTRL_DUP:
            return 1;
        case BIO_CTRL_EOF:
            return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
        case BIO_C_GET_FD: {
            int fd = io_of(bio)->socket_fd();
            if (pointer != nullptr) *static_cast<int*>(pointer) = fd;
            return fd;
        }
        default:  // pending bytes, kTLS, close flags: none of them apply
            return 0;
    }
}

int bio_create(BIO* bio) {
    BIO_set_init(bio, 1);
    return 1;
}

int bio_destroy(BIO*) { return 1; }  // the SocketIo is not ours

BIO_METHOD* socket_method() {
    static BIO_METHOD* method = [] {
        BIO_METHOD* m = BIO_meth_new(
            BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "nous socket");
        if (m == nullptr) return m;
        BIO_meth_set_read(m, bio_read);
        BIO_meth_set_write(m, bio_write);
        BIO_meth_set_ctrl(m, bio_ctrl);
        BIO_meth_set_create(m, bio_create);
        BIO_meth_set_destroy(m, bio_destroy);
        return m;
    }();
    return method;
}

thread_local SslCapture* armed_capture = nullptr;

}  // namespace

bool attach_socket_bio(SSL* ssl, SocketIo* io) {
    BIO_METHOD* method = socket_method();
    if (method == nullptr) return false;
    BIO* bio = BIO_new(method);
    if (bio == nullptr) return false;
    BIO_set_data(bio, io);
    // One BIO for both directions: given the same BIO twice, SSL_set_bio
    // takes the second reference itself.
    SSL_set_bio(ssl, bio, bio);
    return true;
}

void on_ssl_info(const SSL* ssl, int, int) {
    SslCapture* capture = armed_capture;
    if (capture == nullptr || capture->ssl_ != nullptr) return;
    if (SSL_get_fd(ssl) == capture->fd_) capture->ssl_ = const_cast<SSL*>(ssl);
}

SslCapture::SslCapture(int fd) noexcept : fd_(fd), previous_(armed_capture) {
    armed_capture = this;
}

SslCapture::~SslCapture() { armed_capture = previous_; }

void enable_ssl_capture(SSL_CTX* ctx) { SSL_CTX_set_info_callback(ctx, on_ssl_info); }

}  // namespace nous::http::detail
