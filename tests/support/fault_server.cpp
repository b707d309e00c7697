#include "fault_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace nous::test {

namespace {
int listen_loopback(int backlog, std::uint16_t& port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, backlog) != 0)
        throw std::runtime_error("cannot listen on loopback");
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    return fd;
}
}  // namespace

long Peer::receive(char* buffer, std::size_t size) {
    if (fd_ < 0) return -1;
    if (ssl_ == nullptr) return ::recv(fd_, buffer, size, 0);
    std::size_t got = 0;
    return SSL_read_ex(ssl_, buffer, size, &got) == 1 ? static_cast<long>(got) : -1;
}

bool Peer::read_request(std::string* head_out, std::string* body_out) {
    for (;;) {
        auto end = buffer_.find("\r\n\r\n");
        if (end != std::string::npos) {
            std::string head = buffer_.substr(0, end + 4);
            std::size_t length = 0;
            std::string lower;
            for (char c : head)
                lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            auto cl = lower.find("content-length:");
            if (cl != std::string::npos) {
                auto p = cl + 15;
                while (lower[p] == ' ') ++p;
                std::from_chars(lower.data() + p, lower.data() + lower.size(), length);
            }
            while (buffer_.size() < end + 4 + length) {
                char chunk[65536];
                const long n = receive(chunk, sizeof chunk);
                if (n <= 0) return false;
                buffer_.append(chunk, static_cast<std::size_t>(n));
            }
            if (head_out) *head_out = head;
            if (body_out) *body_out = buffer_.substr(end + 4, length);
            buffer_.erase(0, end + 4 + length);
            ++requests_;
            return true;
        }
        char chunk[65536];
        const long n = receive(chunk, sizeof chunk);
        if (n <= 0) return false;
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

bool Peer::send(std::string_view bytes) {
    if (ssl_ != nullptr) {
        std::size_t written = 0;
        return bytes.empty() || (SSL_write_ex(ssl_, bytes.data(), bytes.size(), &written) == 1 &&
                                 written == bytes.size());
    }
    while (!bytes.empty()) {
        ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void Peer::close_write() {
    if (ssl_ != nullptr) SSL_shutdown(ssl_);
    ::shutdown(fd_, SHUT_WR);
}

void Peer::reset() {
    // Closing with linger 0 sends RST instead of FIN.
    std::lock_guard lock(socket_.mutex);
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd_);
    socket_.fd = fd_ = -1;
}

void Peer::stall() {
    while (!stopping_ && fd_ >= 0) {
        pollfd p{fd_, POLLIN, 0};
        int rc = ::poll(&p, 1, 50);
        if (rc > 0) {
            char buf[4096];
            if (receive(buf, sizeof buf) <= 0) return;
        }
    }
}

FaultServer::FaultServer(Script script, int backlog) : script_(std::move(script)) {
    start(backlog);
}

FaultServer::FaultServer(Script script, ServerTls tls, int backlog)
    : script_(std::move(script)), tls_(std::move(tls)) {
    ssl_ctx_ = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(ssl_ctx_, tls_->cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ssl_ctx_, tls_->key_file.c_str(), SSL_FILETYPE_PEM) != 1)
        throw std::runtime_error("fault server: cannot load " + tls_->cert_file);
    // Sessions resumable (TLS 1.2 ids and tickets, TLS 1.3 tickets), as servers have it.
    static const unsigned char id[] = "nous-test";
    SSL_CTX_set_session_id_context(ssl_ctx_, id, sizeof id - 1);
    SSL_CTX_set_session_cache_mode(ssl_ctx_, SSL_SESS_CACHE_SERVER);
    SSL_CTX_set_num_tickets(ssl_ctx_, 2);
    // OpenSSL's own group list, as nginx and most servers have it.
    SSL_CTX_set1_groups_list(ssl_ctx_, "X25519:P-256:X448:P-521:P-384");
    if (tls_->tls12_only) SSL_CTX_set_max_proto_version(ssl_ctx_, TLS1_2_VERSION);
    start(backlog);
}

void FaultServer::start(int backlog) {
    listen_fd_ = listen_loopback(backlog, port_);
    acceptor_ = std::thread([this] {
        for (;;) {
            int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) {
                if (stopping_) return;
                if (errno == EINTR || errno == ECONNABORTED) continue;
                return;
            }
            std::uint64_t index = accepted_.fetch_add(1);
            std::lock_guard lock(mutex_);
            if (stopping_) {
                ::close(fd);
                return;
            }
            auto& socket = connections_.emplace_back();
            socket.fd = fd;
            socket.thread = std::thread([this, &socket, index] { serve(socket, index); });
        }
    });
}

void FaultServer::serve(PeerSocket& socket, std::uint64_t index) {
    // OpenSSL writes without MSG_NOSIGNAL: a client gone must not kill the test.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    SSL* ssl = nullptr;
    if (ssl_ctx_ != nullptr) {
        // Records leave at once, as POCO's and most TLS servers' sockets send
        // them: a script's reset must not discard a response Nagle still holds.
        int one = 1;
        ::setsockopt(socket.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ssl = SSL_new(ssl_ctx_);
        SSL_set_fd(ssl, socket.fd);
        if (SSL_accept(ssl) != 1) {  // a client that rejected our certificate, or went away
            SSL_free(ssl);
            ERR_clear_error();
            return;
        }
        if (tls_->on_handshake) tls_->on_handshake(ssl);
    }
    Peer peer(socket, stopping_, ssl);
    script_(peer, index);
    if (peer.fd() >= 0) {
        peer.close_write();  // close_notify over TLS, then FIN
        // Wait for the client to close, so its reads see our FIN, not a reset.
        peer.stall();
    }
    if (ssl != nullptr) SSL_free(ssl);
    ERR_clear_error();
}

void FaultServer::stop() {
    if (stopping_.exchange(true)) return;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    std::lock_guard lock(mutex_);
    for (auto& socket : connections_) {
        {
            std::lock_guard socket_lock(socket.mutex);
            if (socket.fd >= 0) ::shutdown(socket.fd, SHUT_RDWR);
        }
        socket.thread.join();
        if (socket.fd >= 0) ::close(socket.fd);
    }
    connections_.clear();
}

FaultServer::~FaultServer() {
    stop();
    if (ssl_ctx_ != nullptr) SSL_CTX_free(ssl_ctx_);
}

std::string ok_response(std::string_view body, std::string_view extra_headers) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
           std::string(extra_headers) + "\r\n" + std::string(body);
}

std::string chunk(std::string_view data) {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + std::string(data) + "\r\n";
}

std::uint16_t unused_loopback_port() {
    std::uint16_t port = 0;
    ::close(listen_loopback(1, port));
    return port;
}

BlackholeListener::BlackholeListener() {
    listen_fd_ = listen_loopback(0, port_);
    // Fill the accept queue; with backlog 0 later SYNs are dropped.
    for (int i = 0; i < 4; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port_);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        fillers_.push_back(fd);
    }
}

BlackholeListener::~BlackholeListener() {
    for (int fd : fillers_) ::close(fd);
    ::close(listen_fd_);
}

}  // namespace nous::test
