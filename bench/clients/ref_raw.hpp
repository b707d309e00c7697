#pragma once
// ref-raw: the limit, a raw keep-alive socket (one sendmsg per request, recv
// into a 64 KiB buffer, framing parsed by hand, events split with memchr).
// ref-openssl builds on it.

#include <Poco/URI.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "client.hpp"

namespace bench {

/// The limit: a raw keep-alive socket. One sendmsg per request; recv into a
/// 64 KiB buffer; Content-Length or chunked framing; for event streams, lines
/// split with memchr, events and data bytes counted, up to [DONE].
struct RawClient : Client {
    int fd = -1;
    std::string origin;
    bool nodelay;
    bool events_mode;
    std::unique_ptr<char[]> buffer{new char[65536]};
    std::size_t have = 0, used = 0;
    RawClient(bool nd, bool streamed) : nodelay(nd), events_mode(streamed) {}
    ~RawClient() override {
        if (fd >= 0) ::close(fd);
    }
    /// The byte stream: plain TCP here; ref-openssl puts TLS over it.
    virtual ssize_t receive(char* p, std::size_t n) { return ::recv(fd, p, n, 0); }
    virtual bool send_request(const std::string& head, const std::string& body) {
        iovec iov[2] = {{const_cast<char*>(head.data()), head.size()},
                        {const_cast<char*>(body.data()), body.size()}};
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = 2;
        return ::sendmsg(fd, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(head.size() + body.size());
    }
    virtual void connected(const Poco::URI&) {}
    virtual void closing() {}
    void connect_to(const Poco::URI& uri) {
        if (fd >= 0) {
            closing();
            ::close(fd);
        }
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(uri.getPort());
        ::inet_pton(AF_INET, uri.getHost() == "localhost" ? "127.0.0.1" : uri.getHost().c_str(),
                    &addr.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            abort_run("ref-raw: connect");
        int one = nodelay ? 1 : 0;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        have = used = 0;
        connected(uri);
    }
    bool fill() {
        if (used == have) have = used = 0;
        ssize_t n = receive(buffer.get() + have, 65536 - have);
        if (n <= 0) return false;
        have += static_cast<std::size_t>(n);
        return true;
    }
    /// The next line (without CRLF) of the head or of chunk framing.
    std::string line() {
        for (;;) {
            if (const void* nl = std::memchr(buffer.get() + used, '\n', have - used)) {
                const char* end = static_cast<const char*>(nl);
                std::string out(static_cast<const char*>(buffer.get() + used), end);
                used = static_cast<std::size_t>(end - buffer.get()) + 1;
                if (!out.empty() && out.back() == '\r') out.pop_back();
                return out;
            }
            if (used > 0) {  // keep the partial line at the front
                std::memmove(buffer.get(), buffer.get() + used, have - used);
                have -= used;
                used = 0;
            }
            if (!fill()) abort_run("ref-raw: connection closed");
        }
    }
    // Event counting across reads: the partial line carried over.
    std::string carry;
    std::uint64_t events = 0, bytes = 0;
    bool in_event = false, done = false;
    void scan(const char* p, std::size_t n) {
        while (n > 0 && !done) {
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', n));
            if (!nl) {
                carry.append(p, n);
                return;
            }
            std::string_view l;
            if (!carry.empty()) {
                carry.append(p, static_cast<std::size_t>(nl - p));
                l = carry;
            } else {
                l = std::string_view(p, static_cast<std::size_t>(nl - p));
            }
            if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
            if (l.empty()) {
                if (in_event) ++events;
                in_event = false;
            } else if (l.rfind("data: ", 0) == 0) {
                if (l == "data: [DONE]")
                    done = true;
                else {
                    bytes += l.size() - 6;
                    in_event = true;
                }
            }
            carry.clear();
            n -= static_cast<std::size_t>(nl - p) + 1;
            p = nl + 1;
        }
    }
    void body_bytes(const char* p, std::size_t n, std::string& out) {
        if (events_mode)
            scan(p, n);
        else
            out.append(p, n);
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        Poco::URI uri(url);
        const std::string o = uri.getHost() + ":" + std::to_string(uri.getPort());
        if (fd < 0 || o != origin || g_tls.new_connection) {
            connect_to(uri);
            origin = o;
        }
        const std::string head =
            "POST " + uri.getPathAndQuery() + " HTTP/1.1\r\nHost: " + o +
            "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n\r\n";
        if (!send_request(head, body)) abort_run("ref-raw: short send");
        out.clear();
        events = bytes = 0;
        in_event = done = false;
        carry.clear();
        const std::string status_line = line();
        const int status = std::atoi(status_line.c_str() + 9);
        long long length = -1;
        bool chunked = false;
        for (std::string h = line(); !h.empty(); h = line()) {
            for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (h.rfind("content-length:", 0) == 0) length = std::atoll(h.c_str() + 15);
            if (h.rfind("transfer-encoding:", 0) == 0 && h.find("chunked") != std::string::npos)
                chunked = true;
        }
        if (!chunked) {
            if (length > 0 && !events_mode) out.reserve(static_cast<std::size_t>(length));
            long long left = length;
            while (left > 0) {
                if (used == have && !fill()) abort_run("ref-raw: body cut");
                const std::size_t take =
                    std::min<std::size_t>(have - used, static_cast<std::size_t>(left));
                body_bytes(buffer.get() + used, take, out);
                used += take;
                left -= static_cast<long long>(take);
            }
        } else {
            for (;;) {
                const long long size = std::strtoll(line().c_str(), nullptr, 16);
                if (size == 0) {
                    line();  // the empty line after the last chunk
                    break;
                }
                long long left = size;
                while (left > 0) {
                    if (used == have && !fill()) abort_run("ref-raw: chunk cut");
                    const std::size_t take =
                        std::min<std::size_t>(have - used, static_cast<std::size_t>(left));
                    body_bytes(buffer.get() + used, take, out);
                    used += take;
                    left -= static_cast<long long>(take);
                }
                line();  // CRLF after the chunk
            }
        }
        if (events_mode)
            out = std::to_string(events) + " events, " + std::to_string(bytes) + " bytes";
        return status;
    }
};

}  // namespace bench
