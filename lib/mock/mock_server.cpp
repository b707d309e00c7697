// The mock LLM server: lifecycle, one thread per connection, and the routes
// (chat in every provider's format, the benchmark bodies, echo).

#include "nous/mock/mock_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bench_bodies.hpp"
#include "chat_requests.hpp"
#include "embedding_replies.hpp"
#include "faults.hpp"
#include "provider_formats.hpp"
#include "wire.hpp"

namespace nous::http {

std::optional<std::string> MockRequest::header(const std::string& lower_name) const {
    for (const auto& [k, v] : headers)
        if (k == lower_name) return v;
    return std::nullopt;
}

namespace {

/// Between two keep-alives of a quiet stream (the faults keepalive_only and slow_first_token).
constexpr std::chrono::milliseconds kKeepaliveGap(50);

/// The client closed its side (a quiet reply's only way to notice).
bool peer_gone(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace

struct MockServer::Impl {
    MockServerOptions options;
    std::unique_ptr<mock::RateLimiter> limiter;  ///< made by start(), from the options
    int listen_fd = -1;
    std::uint16_t port = 0;
    std::thread acceptor;
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> accepted{0}, served{0}, refused{0};

    mutable std::mutex mutex;  // guards everything below
    std::condition_variable stop_cv;
    Handler handler;
    MockRequest last;
    struct Conn {
        int fd;
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::list<Conn> connections;

    bool sleep_for(std::chrono::milliseconds d) {
        std::unique_lock lock(mutex);
        return !stop_cv.wait_for(lock, d, [&] { return stopping.load(); });
    }

    void accept_loop() {
        for (;;) {
            int fd = ::accept(listen_fd, nullptr, nullptr);
            if (fd < 0) {
                if (stopping) return;
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (errno == EMFILE || errno == ENFILE) {
                    sleep_for(std::chrono::milliseconds(10));
                    continue;
                }
                return;
            }
            accepted.fetch_add(1);
            int flag = options.nagle ? 0 : 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &flag, sizeof flag);
            std::lock_guard lock(mutex);
            if (stopping) {
                ::close(fd);
                return;
            }
            // Reap finished connection threads.
            for (auto it = connections.begin(); it != connections.end();) {
                if (it->done) {
                    it->thread.join();
                    ::close(it->fd);
                    it = connections.erase(it);
                } else {
                    ++it;
                }
            }
            if (connections.size() >= options.max_connections) {
                refuse(fd, "the mock serves at most " + std::to_string(options.max_connections) +
                               " connections at once");
                continue;
            }
            auto& conn = connections.emplace_back();
            conn.fd = fd;
            try {
                conn.thread = std::thread([this, &conn] {
                    serve(conn.fd);
                    ::shutdown(conn.fd, SHUT_RDWR);
                    conn.done = true;
                });
            } catch (const std::system_error&) {
                // No thread to be had (EAGAIN: a thread or memory limit): this
                // connection is refused, the mock goes on.
                connections.pop_back();
                refuse(fd, "the mock could not start a thread for this connection");
            }
        }
    }

    /// A connection the mock cannot serve: 503 (the request is not read), closed.
    void refuse(int fd, const std::string& why) {
        refused.fetch_add(1);
        mock::write_response(
            fd, 503, {{"Connection", "close"}, {"Retry-After", "1"}},
            R"({"error":{"message":)" + mock::json_string(why) + R"(,"type":"server_error"}})",
            false);
        ::close(fd);
    }

    bool write_response(int fd, const MockResponse& response) {
        return mock::write_response(fd, response.status, response.headers, response.body,
                                    options.nagle);
    }

    bool write_response(int fd, int status,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::string_view body) {
        return mock::write_response(fd, status, headers, body, options.nagle);
    }

    /// A streamed reply: the SSE events in one chunked body, paced like generation
    /// (first-token latency, then tokens_per_second between events), each
    /// event made as it is sent; or the stream a fault asks for.
    bool stream_events(int fd, mock::EventStream events, const std::string& head_lines,
                       mock::Fault fault, std::chrono::milliseconds fault_delay) {
        using mock::Fault;
        std::string head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n" +
            head_lines + "Transfer-Encoding: chunked\r\n\r\n";
        if (!mock::send_all(fd, head)) return false;
        if (fault == Fault::keepalive_only || fault == Fault::slow_first_token) {
            // Keep-alives only: forever, or until the slow first token is due.
            const auto until = std::chrono::steady_clock::now() + fault_delay;
            const std::string keepalive(mock::keepalive_event(events.format()));
            while (fault == Fault::keepalive_only || std::chrono::steady_clock::now() < until) {
                if (!mock::write_chunk(fd, keepalive) || !sleep_for(kKeepaliveGap)) return false;
            }
        }
        if (options.first_token_latency.count() > 0 && !sleep_for(options.first_token_latency))
            return false;
        auto gap = options.tokens_per_second > 0 ? std::chrono::milliseconds(static_cast<long long>(
                                                       1000.0 / options.tokens_per_second))
                                                 : std::chrono::milliseconds(0);
        // midstream_error and truncate stop after the prologue and a few tokens.
        const bool stops_early = fault == Fault::midstream_error || fault == Fault::truncate;
        const std::size_t sent_before_fault = events.prologue_size() + mock::kTokensBeforeFault;
        std::string event, following;
        bool have = events.next(event);
        std::size_t sent = 0;
        for (bool first = true; have; first = false) {
            if (!first && gap.count() > 0 && !sleep_for(gap)) return false;
            if (stops_early && sent == sent_before_fault) {
                if (fault == Fault::midstream_error &&
                    !mock::write_chunk(fd, mock::midstream_error_event(events.format())))
                    return false;
                return mock::write_chunk(fd, "", /*last=*/true);
            }
            const bool more = events.next(following);
            if (!mock::write_chunk(fd, event, /*last=*/!more)) return false;
            ++sent;
            event.swap(following);
            have = more;
        }
        return true;
    }

    /// A non-streamed reply of any length: Content-Length from the generator,
    /// the body sent in pieces as it is made (one write when it is small).
    bool write_whole(int fd, const mock::WholeBody& body, const std::string& id_header) {
        constexpr std::size_t piece = 64 * 1024;
        const std::uint64_t size = body.size();
        std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + id_header +
                          "Content-Length: " + std::to_string(size) + "\r\n\r\n";
        if (options.nagle) {
            // Two writes with Nagle on: the body waits for the client's ACK of the head.
            if (!mock::send_all(fd, out)) return false;
            out.clear();
        }
        std::uint64_t offset = 0;
        while (offset < size) {
            const std::size_t added = body.read(offset, piece, out);
            offset += added;
            if (out.size() >= piece || offset >= size) {
                if (!mock::send_all(fd, out)) return false;
                out.clear();
            }
        }
        return out.empty() || mock::send_all(fd, out);
    }

    /// What every chat and embeddings answer passes once its request is read:
    /// the key's limits (past them, the provider's 429), then a fault that
    /// answers before any body. The operations headers when the answer goes
    /// on; nullopt when the reply was written here (`written` says how).
    std::optional<mock::HeaderList> admit(int fd, mock::Format format, const MockRequest& request,
                                          mock::Fault fault, std::int64_t input_tokens,
                                          std::int64_t output_tokens, bool& written) {
        const std::string id = "req_mock_" + std::to_string(served.load());
        mock::LimitState limits;
        if (!limiter->admit(mock::credential_of(request), input_tokens, output_tokens, limits)) {
            written = write_response(fd, mock::limit_reply(format, id, limits));
            return std::nullopt;
        }
        auto operations = mock::operations_headers(
            format, id, fault == mock::Fault::rate_limit ? mock::exhausted_limits() : limits);
        if (auto failed = mock::error_reply(format, fault)) {
            failed->headers.insert(failed->headers.end(), operations.begin(), operations.end());
            written = write_response(fd, *failed);
            return std::nullopt;
        }
        return operations;
    }

    /// keepalive_only on a whole reply: it has nothing to keep alive, so no
    /// byte at all, until the client gives up (or the server stops).
    bool hold_silent(int fd) {
        while (sleep_for(kKeepaliveGap))
            if (peer_gone(fd)) return false;
        return false;
    }

    /// Answers a chat request: streamed, or whole after as long as generating
    /// it would take; or fails as its x-mock-fault header asks.
    bool answer_chat(int fd, const mock::ChatRoute& route, const MockRequest& request) {
        using mock::Fault;
        bool stream = false;
        mock::Reply reply;
        MockResponse error;
        auto fault = mock::requested_fault(request, options.fault, error);
        if (!fault || !mock::read_chat(route, request, options, *fault, stream, reply, error))
            return write_response(fd, error);
        const std::int64_t output_tokens =
            reply.pieces.empty() ? reply.tokens : static_cast<std::int64_t>(reply.pieces.size());
        bool written = false;
        const auto operations =
            admit(fd, route.format, request, *fault, reply.prompt_tokens, output_tokens, written);
        if (!operations) return written;
        std::string head_lines;
        for (const auto& [name, value] : *operations) head_lines += name + ": " + value + "\r\n";
        if (stream)
            return stream_events(fd, mock::EventStream(route.format, std::move(reply)), head_lines,
                                 *fault, mock::fault_delay(request));
        auto generation = options.first_token_latency;
        if (options.tokens_per_second > 0)
            generation += std::chrono::milliseconds(
                static_cast<long long>(1000.0 * options.stream_tokens / options.tokens_per_second));
        if (*fault == Fault::slow_first_token) generation += mock::fault_delay(request);
        if (*fault == Fault::keepalive_only) return hold_silent(fd);
        if (generation.count() > 0 && !sleep_for(generation)) return false;
        const auto body = mock::whole_body(route.format, reply);
        if (*fault == Fault::midstream_error || *fault == Fault::truncate) {
            // A whole reply cut in half: Content-Length promises more than is sent.
            std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + head_lines +
                              "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
            body.read(0, static_cast<std::size_t>(body.size() / 2), out);
            mock::send_all(fd, out);
            return false;  // and the connection closes
        }
        return write_whole(fd, body, head_lines);
    }

    /// Answers an embeddings request, whole, with the operations headers of
    /// chat; or fails as its x-mock-fault header asks (those of a whole reply).
    bool answer_embeddings(int fd, const mock::EmbeddingRoute& route, const MockRequest& request) {
        using mock::Fault;
        MockResponse error, response;
        auto fault = mock::requested_fault(request, options.fault, error);
        std::int64_t input_tokens = 0;
        if (!fault || !mock::embedding_reply(route, request, response.body, input_tokens, error))
            return write_response(fd, error);
        bool written = false;
        auto operations = admit(fd, route.format, request, *fault, input_tokens, 0, written);
        if (!operations) return written;
        if (*fault == Fault::slow_first_token && !sleep_for(mock::fault_delay(request)))
            return false;
        if (*fault == Fault::keepalive_only) return hold_silent(fd);
        if (*fault == Fault::midstream_error || *fault == Fault::truncate) {
            // Cut in half: Content-Length promises more than is sent, and the connection closes.
            std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
            for (const auto& [name, value] : *operations) out += name + ": " + value + "\r\n";
            out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
            out.append(response.body, 0, response.body.size() / 2);
            mock::send_all(fd, out);
            return false;
        }
        response.headers = std::move(*operations);
        return write_response(fd, response);  // head and body in one send, the body not copied
    }

    void serve(int fd) {
        std::string buffer;
        MockRequest request;
        while (!stopping) {
            const mock::ReadRequest got = mock::read_request(
                fd, buffer, request, options.idle_close, options.max_request_body);
            if (got == mock::ReadRequest::too_large) {
                const std::string why = "request body too large (the mock takes at most " +
                                        std::to_string(options.max_request_body) + " bytes)";
                write_response(fd, 413, {{"Connection", "close"}},
                               R"({"error":{"message":)" + mock::json_string(why) +
                                   R"(,"type":"invalid_request_error"}})");
                break;
            }
            if (got != mock::ReadRequest::request) break;
            served.fetch_add(1);
            Handler h;
            {
                std::lock_guard lock(mutex);
                last = request;
                h = handler;
            }
            MockResponse response;
            bool ok = true;
            const std::string route = request.target.substr(0, request.target.find('?'));
            if (h && h(request, response)) {
                ok = write_response(fd, response);
            } else if (auto chat = mock::chat_route(request.method, route)) {
                ok = answer_chat(fd, *chat, request);
            } else if (auto embedding = mock::embedding_route(request.method, route)) {
                ok = answer_embeddings(fd, *embedding, request);
            } else if (route == "/v1/models") {
                response.body =
                    R"({"object":"list","data":[{"id":"mock-1","object":"model","owned_by":"nous-http"}]})";
                ok = write_response(fd, response);
            } else if (route == "/small") {
                ok = write_response(fd, 200, {}, mock::small_body());
            } else if (route == "/large") {
                ok = write_response(fd, 200, {}, mock::large_body());
            } else if (route == "/chunked1m") {
                ok = mock::send_chunked_1m(fd);
            } else if (route == "/sse100m") {
                ok = mock::send_firehose(fd, options.firehose_bytes, stopping);
            } else if (route == "/sse49") {
                ok = mock::send_small_events(fd, options.firehose_bytes, stopping);
            } else if (route == "/echo") {
                response.body = request.body;
                if (auto t = request.header("content-type"))
                    response.headers.emplace_back("Content-Type", *t);
                ok = write_response(fd, response);
            } else {
                response.status = 404;
                response.body = R"({"error":{"message":"no such route","type":"not_found"}})";
                ok = write_response(fd, response);
            }
            auto connection = request.header("connection");
            if (!ok || (connection && mock::lower(*connection) == "close")) break;
        }
    }
};

MockServer::MockServer(MockServerOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
}

MockServer::~MockServer() { stop(); }

void MockServer::start() {
    const MockServerOptions& o = impl_->options;
    if (o.stream_tokens < 0) throw std::invalid_argument("mock server: stream_tokens < 0");
    if (!(o.tokens_per_second >= 0))
        throw std::invalid_argument("mock server: tokens_per_second must be 0 or more");
    if (o.first_token_latency.count() < 0 || o.idle_close.count() < 0)
        throw std::invalid_argument("mock server: a negative duration");
    if (o.max_connections == 0) throw std::invalid_argument("mock server: max_connections 0");
    if (!mock::is_fault_name(o.fault))
        throw std::invalid_argument("mock server: unknown fault " + o.fault);
    if (o.rpm < 0 || o.tpm < 0) throw std::invalid_argument("mock server: a negative rpm or tpm");
    impl_->limiter = std::make_unique<mock::RateLimiter>(o.rpm, o.tpm);
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("mock server: socket() failed");
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(impl_->options.port);
    if (::inet_pton(AF_INET, impl_->options.bind_address.c_str(), &addr.sin_addr) != 1) {
        ::close(fd);
        throw std::runtime_error("mock server: bad bind address " + impl_->options.bind_address);
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, 512) != 0) {
        std::string why = std::strerror(errno);
        ::close(fd);
        throw std::runtime_error("mock server: cannot listen on " + impl_->options.bind_address +
                                 ":" + std::to_string(impl_->options.port) + ": " + why);
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    impl_->listen_fd = fd;
    impl_->port = ntohs(addr.sin_port);
    impl_->acceptor = std::thread([this] { impl_->accept_loop(); });
}

void MockServer::stop() {
    if (!impl_ || impl_->listen_fd < 0) return;
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
        impl_->stop_cv.notify_all();
        for (auto& c : impl_->connections) ::shutdown(c.fd, SHUT_RDWR);
    }
    ::shutdown(impl_->listen_fd, SHUT_RDWR);
    if (impl_->acceptor.joinable()) impl_->acceptor.join();
    ::close(impl_->listen_fd);
    impl_->listen_fd = -1;
    std::list<Impl::Conn> connections;
    {
        std::lock_guard lock(impl_->mutex);
        connections.swap(impl_->connections);
    }
    for (auto& c : connections) {
        c.thread.join();
        ::close(c.fd);
    }
}

std::uint16_t MockServer::port() const noexcept { return impl_->port; }
std::string MockServer::base_url() const {
    return "http://127.0.0.1:" + std::to_string(impl_->port);
}

void MockServer::set_handler(Handler handler) {
    std::lock_guard lock(impl_->mutex);
    impl_->handler = std::move(handler);
}

std::uint64_t MockServer::connections_accepted() const noexcept { return impl_->accepted.load(); }
std::uint64_t MockServer::requests_served() const noexcept { return impl_->served.load(); }

MockRequest MockServer::last_request() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->last;
}

std::string MockServer::small_body() { return std::string(mock::small_body()); }
std::string MockServer::large_body() { return std::string(mock::large_body()); }

}  // namespace nous::http
