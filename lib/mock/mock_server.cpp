// The mock LLM server: lifecycle, one thread per connection, the routes
// (chat in every provider's format, embeddings, the benchmark bodies, echo),
// and what every chat and embeddings answer passes first. The answers
// themselves are chat_answer.cpp and embeddings_answer.cpp.

#include "nous/mock/mock_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <list>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bench_bodies.hpp"
#include "credentials.hpp"
#include "server_impl.hpp"

namespace nous::http {

std::optional<std::string> MockRequest::header(const std::string& lower_name) const {
    for (const auto& [k, v] : headers)
        if (k == lower_name) return v;
    return std::nullopt;
}

namespace {

/// The client closed its side (a quiet reply's only way to notice).
bool peer_gone(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace

void MockServer::Impl::accept_loop() {
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
        // Reap the connections whose thread has finished (each has left the
        // serving loop and only exits now).
        for (const auto& it : finished) {
            it->thread.join();
            ::close(it->fd);
            connections.erase(it);
        }
        finished.clear();
        if (connections.size() >= options.max_connections) {
            refuse(fd, "the mock serves at most " + std::to_string(options.max_connections) +
                           " connections at once");
            continue;
        }
        auto& conn = connections.emplace_back();
        conn.fd = fd;
        const auto self = std::prev(connections.end());
        try {
            conn.thread = std::thread([this, self] {
                serve(self->fd);
                // Queued before the shutdown: a client that sees the close
                // and connects again finds this connection reaped, not
                // counted against max_connections.
                {
                    std::lock_guard done(mutex);
                    finished.push_back(self);
                }
                ::shutdown(self->fd, SHUT_RDWR);
            });
        } catch (const std::system_error&) {
            // No thread to be had (EAGAIN: a thread or memory limit): this
            // connection is refused, the mock goes on.
            connections.pop_back();
            refuse(fd, "the mock could not start a thread for this connection");
        }
    }
}

bool MockServer::Impl::sleep_for(std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    for (;;) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0) return !stopping.load();
        pollfd stop{stop_fd, POLLIN, 0};
        const int rc = ::poll(&stop, 1, static_cast<int>(left.count()));
        if (rc > 0 || stopping.load()) return false;
        if (rc < 0 && errno != EINTR) return false;
    }
}

/// A connection the mock cannot serve: 503 (the request is not read), closed.
void MockServer::Impl::refuse(int fd, const std::string& why) {
    refused.fetch_add(1);
    mock::write_response(
        fd, 503, {{"Connection", "close"}, {"Retry-After", "1"}},
        R"({"error":{"message":)" + mock::json_string(why) + R"(,"type":"server_error"}})", false);
    ::close(fd);
}

/// What every chat and embeddings answer passes once its request is read:
/// the key's limits (past them, the provider's 429), then a fault that
/// answers before any body. The operations headers when the answer goes
/// on; nullopt when the reply was written here (`written` says how).
std::optional<mock::HeaderList> MockServer::Impl::admit(int fd, mock::Format format,
                                                        const MockRequest& request,
                                                        mock::Fault fault,
                                                        std::int64_t input_tokens,
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
bool MockServer::Impl::hold_silent(int fd) {
    while (sleep_for(mock::kKeepaliveGap))
        if (peer_gone(fd)) return false;
    return false;
}

void MockServer::Impl::serve(int fd) {
    std::string buffer;
    MockRequest request;
    while (!stopping) {
        std::string why;
        const mock::ReadRequest got = mock::read_request(fd, buffer, request, options.idle_close,
                                                         options.max_request_body, why);
        if (got == mock::ReadRequest::malformed) {
            write_response(fd, 400, {{"Connection", "close"}},
                           R"({"error":{"message":)" +
                               mock::json_string("malformed request: " + why) +
                               R"(,"type":"invalid_request_error"}})");
            break;
        }
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
        } else if (!options.require_key.empty() && mock::is_model_route(request.method, route) &&
                   !mock::credential_accepted(request, route, options.require_key, response)) {
            ok = write_response(fd, response);
        } else if (otlp.answer(request, route, response)) {
            ok = write_response(fd, response);
        } else if (route == "/token" && request.method == "POST") {
            google->answer(request, response);
            ok = write_response(fd, response);
        } else if (mock::is_vertex_route(route) && !google->accepts(request, response)) {
            ok = write_response(fd, response);
        } else if (!options.aws_secret.empty() && route.rfind("/model/", 0) == 0 &&
                   !mock::aws_signature_accepted(request, options.aws_secret, response)) {
            ok = write_response(fd, response);
        } else if (auto chat = mock::chat_route(request.method, route)) {
            if (recorder->enabled()) recorder->chat(chat->format, request);
            ok = answer_chat(fd, *chat, request);
        } else if (auto embedding = mock::embedding_route(request.method, route)) {
            if (recorder->enabled()) recorder->embeddings(embedding->format, request);
            ok = answer_embeddings(fd, *embedding, request);
        } else if (auto counter = mock::count_route(request.method, route)) {
            if (recorder->enabled()) recorder->count(*counter, request);
            mock::count_reply(*counter, request, response);
            ok = write_response(fd, response);
        } else if (route == "/v1/models") {
            response.body =
                R"({"object":"list","data":[{"id":"mock-1","object":"model","owned_by":"nous-http"}]})";
            ok = write_response(fd, response);
        } else if (route == "/small") {
            ok = write_response(fd, 200, {}, mock::small_body());
        } else if (route == "/large") {
            ok = write_response(fd, 200, {}, mock::large_body());
        } else if (auto mib = mock::sized_body_route(route)) {
            ok = mock::send_sized_body(fd, *mib);
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

MockServer::MockServer(MockServerOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
}

MockServer::~MockServer() {
    stop();
    if (impl_ && impl_->stop_fd >= 0) ::close(impl_->stop_fd);
}

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
    impl_->recorder = std::make_unique<mock::RequestRecorder>(o.record_dir);
    impl_->google = std::make_unique<mock::GoogleTokens>(o.google_key_file);
    if (impl_->stop_fd < 0) impl_->stop_fd = ::eventfd(0, EFD_CLOEXEC);
    if (impl_->stop_fd < 0) throw std::runtime_error("mock server: eventfd() failed");
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
    // The kernel's largest accept queue (net.core.somaxconn caps it): with
    // 512, 10,000 clients connecting at once overflowed it, their SYNs were
    // dropped and resent with backoff, and some gave up (bench/run_scale.sh).
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, SOMAXCONN) != 0) {
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
        const std::uint64_t one = 1;
        [[maybe_unused]] const auto wrote = ::write(impl_->stop_fd, &one, sizeof one);
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
    std::lock_guard lock(impl_->mutex);
    impl_->finished.clear();  // of the connections just joined
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
