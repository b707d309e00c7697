#include "fault_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
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
                ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
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
        ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n <= 0) return false;
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

bool Peer::send(std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void Peer::close_write() { ::shutdown(fd_, SHUT_WR); }

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
            if (::recv(fd_, buf, sizeof buf, 0) <= 0) return;
        }
    }
}

FaultServer::FaultServer(Script script, int backlog) : script_(std::move(script)) {
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
            socket.thread = std::thread([this, &socket, index] {
                Peer peer(socket, stopping_);
                script_(peer, index);
                if (peer.fd() >= 0) ::shutdown(peer.fd(), SHUT_WR);
                // Wait for the client to close, so its reads see our FIN, not a reset.
                if (peer.fd() >= 0) peer.stall();
            });
        }
    });
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

FaultServer::~FaultServer() { stop(); }

std::string ok_response(std::string_view body, std::string_view extra_headers) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
           std::string(extra_headers) + "\r\n" + std::string(body);
}

std::string chunk(std::string_view data) {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + std::string(data) + "\r\n";
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
