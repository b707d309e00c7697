// bench/http_backend: the Nous report's localhost scenarios against the
// in-process mock server (default: a Benchee-like table for every client and
// scenario), or against any server with --url-base (one JSON line per run).
//
// Clients: nous-pooled (the library), and references written as a careful
// user would: ref-poco (HTTP/1.1 keep-alive, one session per thread, bulk
// reads), ref-curl (one reused easy handle per thread, TCP_NODELAY on), and
// ref-raw, the limit: a raw keep-alive socket, one sendmsg per request, recv
// into a 64 KiB buffer, events split with memchr.
//
// Checks cost no more than a peer's: status, exact length, memcmp against the
// first response (streams: event count and data bytes). Allocations are
// counted (global operator new) and reported per iteration.

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/URI.h>
#include <openssl/ssl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstring>
#include <new>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef NOUS_BENCH_HAVE_CURL
#include <curl/curl.h>
#endif

#ifdef NOUS_BENCH_HAVE_BEAST
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#endif

#include "nous/http/client.hpp"
#include "bench_util.hpp"
#include "nous/mock/mock_server.hpp"
#include "nous/http/stream.hpp"
#include "nous/http/testing.hpp"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

namespace {

/// https settings of the run: the CA to trust, and whether every iteration
/// opens a fresh connection (cold TCP + TLS; resumption as each client does it).
struct TlsRun {
    std::string cacert;
    bool new_connection = false;
    bool no_resume = false;  ///< with new_connection: no session offered, a full handshake each time
};
TlsRun g_tls;

/// Status 200, the expected length, the same bytes as the first response:
/// anything else aborts the run. A memcmp: no costlier than a peer's check.
struct Expect {
    std::string body;
};

[[noreturn]] void abort_run(const std::string& why) {
    std::cerr << "http_backend: response check failed: " << why << "\n";
    std::exit(1);
}

void check(int status, const std::string& body, const Expect& e) {
    if (status != 200) abort_run("status " + std::to_string(status));
    if (body.size() != e.body.size())
        abort_run("length " + std::to_string(body.size()) + " != " + std::to_string(e.body.size()));
    if (std::memcmp(body.data(), e.body.data(), body.size()) != 0) abort_run("body differs from the first response");
}

// ---- clients: one instance per worker thread ----

struct Client {
    virtual ~Client() = default;
    /// POSTs body to url; returns status and fills `out`.
    virtual int post(const std::string& url, const std::string& body, std::string& out) = 0;
};

struct NousClient : Client {
    nous::http::Options options;
    explicit NousClient(bool nodelay, const std::string& backend) {
        options.max_retries = 0;  // benchmarks never retry
        options.tcp_nodelay = nodelay;
        options.backend = backend;
        options.ca_file = g_tls.cacert;
    }
    ~NousClient() override {
        if (!g_tls.new_connection || options.backend != "pooled") return;  // pool_stats: the pooled backend
        auto stats = nous::http::pool_stats();
        std::fprintf(stderr, "%s: %llu of %llu connections resumed a TLS session\n", options.backend.c_str(),
                     static_cast<unsigned long long>(stats.tls_sessions_resumed),
                     static_cast<unsigned long long>(stats.connections_created));
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        // A fresh connection: the idle one is closed, the origin's TLS session
        // kept (or, with --no-resume, dropped).
        if (g_tls.new_connection) nous::http::pool_clear();
        if (g_tls.no_resume) nous::http::testing::forget_tls_sessions();
        auto r = nous::http::post(url, body, {}, options);
        if (!r) {
            if (r.error().code == nous::http::ErrorCode::http_status) return r.error().status;
            abort_run(std::string(nous::http::to_string(r.error().code)) + ": " + r.error().message);
        }
        out = std::move(r->body);
        return r->status;
    }
};

/// The stream API: every event decoded; the "body" is the event count and data
/// bytes, so the same check applies.
struct NousStreamClient : Client {
    nous::http::Options options;
    NousStreamClient(bool nodelay, const std::string& stream_backend) {
        options.max_retries = 0;
        options.tcp_nodelay = nodelay;
        options.stream_backend = stream_backend;
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        nous::http::Stream s = nous::http::stream(url, body, {}, options);
        std::uint64_t events = 0, bytes = 0;
        bool done = false;
        // The zero-copy path: every event decoded, none copied.
        while (auto item = s.next_view()) {
            if (item->is_error()) {
                if (item->error->code == nous::http::ErrorCode::http_status) return item->error->status;
                abort_run(std::string(nous::http::to_string(item->error->code)) + ": " + item->error->message);
            }
            if (item->is_done()) {
                done = true;
                break;
            }
            ++events;
            bytes += item->event.data.size();
        }
        if (!done) abort_run("stream ended without [DONE]");
        out = std::to_string(events) + " events, " + std::to_string(bytes) + " bytes";
        return 200;
    }
};

struct PocoClient : Client {
    Poco::Net::Context::Ptr context;
    std::unique_ptr<Poco::Net::HTTPClientSession> session;
    std::string origin;
    bool nodelay;
    explicit PocoClient(bool nd) : nodelay(nd) {}
    int post(const std::string& url, const std::string& body, std::string& out) override {
        Poco::URI uri(url);
        std::string o = uri.getHost() + ":" + std::to_string(uri.getPort());
        if (!session || o != origin) {
            if (uri.getScheme() == "https") {
                // A careful user: verification against the system store plus the
                // test CA, the session cache on so that reconnects resume.
                if (!context) {
                    Poco::Net::Context::Params params;
                    params.caLocation = g_tls.cacert;
                    params.verificationMode = Poco::Net::Context::VERIFY_RELAXED;
                    params.loadDefaultCAs = true;
                    context = new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params);
                    context->enableSessionCache(!g_tls.no_resume);
                }
                session = std::make_unique<Poco::Net::HTTPSClientSession>(uri.getHost(), uri.getPort(), context);
            } else {
                session = std::make_unique<Poco::Net::HTTPClientSession>(uri.getHost(), uri.getPort());
            }
            session->setKeepAlive(true);
            session->setKeepAliveTimeout(Poco::Timespan(3600, 0));
            origin = o;
        }
        if (g_tls.new_connection) session->reset();
        for (int attempt = 0;; ++attempt) {
            try {
                Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST, uri.getPathAndQuery(),
                                               Poco::Net::HTTPMessage::HTTP_1_1);
                request.setKeepAlive(true);
                request.setContentType("application/json");
                request.setContentLength(static_cast<std::streamsize>(body.size()));
                std::ostream& os = session->sendRequest(request);
                if (!nodelay) session->socket().setNoDelay(false);
                os.write(body.data(), static_cast<std::streamsize>(body.size()));
                Poco::Net::HTTPResponse response;
                std::istream& is = session->receiveResponse(response);
                auto length = response.getContentLength();
                if (length >= 0) {
                    out.resize(static_cast<std::size_t>(length));
                    if (length > 0) is.read(out.data(), length);  // bulk read into a sized buffer
                } else {
                    out.clear();  // chunked: read to the end of the body
                    char piece[16384];
                    while (is.read(piece, sizeof piece) || is.gcount() > 0)
                        out.append(piece, static_cast<std::size_t>(is.gcount()));
                }
                return response.getStatus();
            } catch (const Poco::Exception& e) {
                session->reset();
                if (attempt > 0) abort_run("ref-poco: " + e.displayText());
            }
        }
    }
};

#ifdef NOUS_BENCH_HAVE_CURL
struct CurlClient : Client {
    CURL* easy = curl_easy_init();
    curl_slist* headers = nullptr;
    explicit CurlClient(bool nodelay) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip for large bodies
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, nodelay ? 1L : 0L);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
            static_cast<std::string*>(ud)->append(p, s * n);
            return s * n;
        });
    }
    ~CurlClient() override {
        curl_slist_free_all(headers);
        curl_easy_cleanup(easy);
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        out.clear();
        curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &out);
        if (!g_tls.cacert.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, g_tls.cacert.c_str());
        if (g_tls.new_connection) curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        if (g_tls.no_resume) curl_easy_setopt(easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
        CURLcode rc = curl_easy_perform(easy);
        if (rc != CURLE_OK) abort_run(std::string("ref-curl: ") + curl_easy_strerror(rc));
        long status = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        return static_cast<int>(status);
    }
};
#endif

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
        iovec iov[2] = {{const_cast<char*>(head.data()), head.size()}, {const_cast<char*>(body.data()), body.size()}};
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
        ::inet_pton(AF_INET, uri.getHost() == "localhost" ? "127.0.0.1" : uri.getHost().c_str(), &addr.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) abort_run("ref-raw: connect");
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
                if (l == "data: [DONE]") done = true;
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
        if (events_mode) scan(p, n);
        else out.append(p, n);
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        Poco::URI uri(url);
        const std::string o = uri.getHost() + ":" + std::to_string(uri.getPort());
        if (fd < 0 || o != origin || g_tls.new_connection) {
            connect_to(uri);
            origin = o;
        }
        const std::string head = "POST " + uri.getPathAndQuery() + " HTTP/1.1\r\nHost: " + o +
                                 "\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n";
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
            if (h.rfind("transfer-encoding:", 0) == 0 && h.find("chunked") != std::string::npos) chunked = true;
        }
        if (!chunked) {
            if (length > 0 && !events_mode) out.reserve(static_cast<std::size_t>(length));
            long long left = length;
            while (left > 0) {
                if (used == have && !fill()) abort_run("ref-raw: body cut");
                const std::size_t take = std::min<std::size_t>(have - used, static_cast<std::size_t>(left));
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
                    const std::size_t take = std::min<std::size_t>(have - used, static_cast<std::size_t>(left));
                    body_bytes(buffer.get() + used, take, out);
                    used += take;
                    left -= static_cast<long long>(take);
                }
                line();  // CRLF after the chunk
            }
        }
        if (events_mode) out = std::to_string(events) + " events, " + std::to_string(bytes) + " bytes";
        return status;
    }
};

/// The TLS session a reference client offers to its next connection, and
/// how many of its handshakes resumed one (printed with --new-connection).
struct SessionKeeper {
    const char* client;
    SSL_SESSION* session = nullptr;
    std::uint64_t handshakes = 0, resumed = 0;
    explicit SessionKeeper(const char* name) : client(name) {}
    ~SessionKeeper() {
        if (g_tls.new_connection && handshakes > 1)
            std::fprintf(stderr, "%s: %llu of %llu handshakes resumed a session\n", client,
                         static_cast<unsigned long long>(resumed), static_cast<unsigned long long>(handshakes));
        release();
    }
    /// Frees the kept session (before its SSL_CTX goes).
    void release() {
        if (session) SSL_SESSION_free(session);
        session = nullptr;
    }
    /// Before the handshake: offer the kept session (unless --no-resume).
    void offer(SSL* ssl) const {
        if (session && !g_tls.no_resume) SSL_set_session(ssl, session);
    }
    void handshook(SSL* ssl) {
        ++handshakes;
        if (SSL_session_reused(ssl)) ++resumed;
    }
    /// Keeps the connection's session (TLS 1.3 tickets arrive after the
    /// handshake), then sends close_notify: OpenSSL marks the session of a
    /// connection freed without it as not resumable.
    void keep_and_shut_down(SSL* ssl) {
        if (SSL_SESSION* s = SSL_get1_session(ssl)) {
            if (session) SSL_SESSION_free(session);
            session = s;
        }
        SSL_shutdown(ssl);
    }
};

/// The TLS limit: raw OpenSSL over the raw client's socket and parser. The
/// chain and host name verified, TLS >= 1.2, SNI, and the session of the last
/// connection offered to the next one.
struct OpenSslClient : RawClient {
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    SessionKeeper sessions{"ref-openssl"};
    explicit OpenSslClient(bool nd) : RawClient(nd, false) {
        ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
        SSL_CTX_set_default_verify_paths(ctx);
        if (!g_tls.cacert.empty()) SSL_CTX_load_verify_locations(ctx, g_tls.cacert.c_str(), nullptr);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT);
    }
    ~OpenSslClient() override {
        drop();
        sessions.release();
        SSL_CTX_free(ctx);
    }
    void drop() {
        if (!ssl) return;
        sessions.keep_and_shut_down(ssl);
        SSL_free(ssl);
        ssl = nullptr;
    }
    void closing() override { drop(); }
    void connected(const Poco::URI& uri) override {
        drop();
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        SSL_set_tlsext_host_name(ssl, uri.getHost().c_str());
        SSL_set1_host(ssl, uri.getHost().c_str());
        sessions.offer(ssl);
        if (SSL_connect(ssl) != 1) abort_run("ref-openssl: handshake failed");
        sessions.handshook(ssl);
    }
    ssize_t receive(char* p, std::size_t n) override {
        for (;;) {
            int got = SSL_read(ssl, p, static_cast<int>(n));
            if (got > 0) return got;
            if (SSL_get_error(ssl, got) != SSL_ERROR_WANT_READ) return -1;
        }
    }
    bool send_request(const std::string& head, const std::string& body) override {
        const std::string all = head + body;  // one record for a small request
        return SSL_write(ssl, all.data(), static_cast<int>(all.size())) == static_cast<int>(all.size());
    }
};

#ifdef NOUS_BENCH_HAVE_BEAST
/// Boost.Beast as a careful user writes it: synchronous, one keep-alive
/// connection (TLS: the chain and host name verified, SNI, the last session
/// offered to the next connection), http::string_body request and response.
struct BeastClient : Client {
    boost::asio::io_context io;
    boost::asio::ssl::context tls_context{boost::asio::ssl::context::tls_client};
    std::unique_ptr<boost::beast::tcp_stream> plain;
    std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> secure;
    boost::beast::flat_buffer buffer;
    std::string origin;
    SessionKeeper sessions{"ref-beast"};
    bool nodelay;
    explicit BeastClient(bool nd) : nodelay(nd) {
        tls_context.set_default_verify_paths();
        if (!g_tls.cacert.empty()) tls_context.load_verify_file(g_tls.cacert);
        tls_context.set_verify_mode(boost::asio::ssl::verify_peer);
        SSL_CTX_set_min_proto_version(tls_context.native_handle(), TLS1_2_VERSION);
        SSL_CTX_set_session_cache_mode(tls_context.native_handle(), SSL_SESS_CACHE_CLIENT);
    }
    ~BeastClient() override { drop(); }
    void drop() {
        boost::system::error_code ignored;
        if (secure) {
            sessions.keep_and_shut_down(secure->native_handle());  // without waiting for the peer's close_notify
            secure->next_layer().socket().close(ignored);
            secure.reset();
        }
        if (plain) {
            plain->socket().close(ignored);
            plain.reset();
        }
        buffer.clear();
    }
    void connect(const Poco::URI& uri) {
        drop();
        boost::asio::ip::tcp::resolver resolver(io);
        auto endpoints = resolver.resolve(uri.getHost(), std::to_string(uri.getPort()));
        if (uri.getScheme() == "https") {
            secure = std::make_unique<boost::beast::ssl_stream<boost::beast::tcp_stream>>(io, tls_context);
            secure->next_layer().connect(endpoints);
            secure->next_layer().socket().set_option(boost::asio::ip::tcp::no_delay(nodelay));
            SSL* ssl = secure->native_handle();
            SSL_set_tlsext_host_name(ssl, uri.getHost().c_str());
            SSL_set1_host(ssl, uri.getHost().c_str());
            sessions.offer(ssl);
            secure->handshake(boost::asio::ssl::stream_base::client);
            sessions.handshook(ssl);
        } else {
            plain = std::make_unique<boost::beast::tcp_stream>(io);
            plain->connect(endpoints);
            plain->socket().set_option(boost::asio::ip::tcp::no_delay(nodelay));
        }
    }
    template <class Stream>
    int exchange(Stream& stream, const Poco::URI& uri, const std::string& body, std::string& out) {
        namespace http = boost::beast::http;
        http::request<http::string_body> request{http::verb::post, uri.getPathAndQuery(), 11};
        request.set(http::field::host, uri.getHost() + ":" + std::to_string(uri.getPort()));
        request.set(http::field::content_type, "application/json");
        request.keep_alive(true);
        request.body() = body;
        request.prepare_payload();
        http::write(stream, request);
        http::response_parser<http::string_body> parser;
        parser.body_limit(1ull << 30);
        http::read(stream, buffer, parser);
        out = std::move(parser.get().body());
        return parser.get().result_int();
    }
    int post(const std::string& url, const std::string& body, std::string& out) override {
        Poco::URI uri(url);
        const std::string o = uri.getScheme() + "://" + uri.getHost() + ":" + std::to_string(uri.getPort());
        try {
            if ((!secure && !plain) || o != origin || g_tls.new_connection) {
                connect(uri);
                origin = o;
            }
            return secure ? exchange(*secure, uri, body, out) : exchange(*plain, uri, body, out);
        } catch (const std::exception& e) {
            abort_run(std::string("ref-beast: ") + e.what());
        }
    }
};
#endif

std::unique_ptr<Client> make_client(const std::string& name, bool nodelay) {
    if (name == "nous-pooled") return std::make_unique<NousClient>(nodelay, "pooled");
    if (name == "nous-curl") return std::make_unique<NousClient>(nodelay, "curl");
    if (name == "nous-window") return std::make_unique<NousStreamClient>(nodelay, "window");
    if (name == "nous-pull") return std::make_unique<NousStreamClient>(nodelay, "pull");
    if (name == "ref-poco") return std::make_unique<PocoClient>(nodelay);
    if (name == "ref-raw") return std::make_unique<RawClient>(nodelay, false);
    if (name == "ref-openssl") return std::make_unique<OpenSslClient>(nodelay);
#ifdef NOUS_BENCH_HAVE_BEAST
    if (name == "ref-beast") return std::make_unique<BeastClient>(nodelay);
#endif
    if (name == "ref-raw-events") return std::make_unique<RawClient>(nodelay, true);
#ifdef NOUS_BENCH_HAVE_CURL
    if (name == "ref-curl") return std::make_unique<CurlClient>(nodelay);
#endif
    throw std::invalid_argument("unknown client " + name);
}

// ---- scenarios ----

struct Scenario {
    std::string name;
    int concurrency;      ///< requests in flight per iteration (worker threads)
    int sequential;       ///< requests per worker per iteration
    std::string path;
    std::size_t request_bytes;
    bool streamed = false;  ///< through the stream API (stream clients only)
};

const std::vector<Scenario>& scenarios() {
    static const std::vector<Scenario> all = {
        {"small_post", 1, 1, "/small", 1024},
        {"parallel_50", 50, 1, "/small", 1024},
        {"large_body", 10, 1, "/large", 256 * 1024},
        {"large_seq", 1, 10, "/large", 1024},
        {"sse_firehose", 1, 1, "/sse100m", 64, true},
        {"chunked_1m", 1, 1, "/chunked1m", 1024},  // own servers only: 1,000 chunks of 1,000 bytes
    };
    return all;
}

std::string request_body(std::size_t bytes) {
    // {"hello": "aaaa..."} of exactly `bytes` bytes.
    std::string head = R"({"hello":")", tail = R"("})";
    return head + std::string(bytes - head.size() - tail.size(), 'a') + tail;
}

struct Stats {
    std::vector<double> ms;  ///< per-iteration durations
    double seconds = 0;
    long peak_rss_kb = 0;
    double bytes_per_iteration = 0, events_per_iteration = 0;  ///< streamed scenarios
    double allocated_per_iteration = 0;  ///< bytes allocated (operator new), process-wide
    double ips() const { return ms.empty() ? 0 : static_cast<double>(ms.size()) / seconds; }
    double pct(double p) const {
        if (ms.empty()) return 0;
        std::vector<double> s = ms;
        std::sort(s.begin(), s.end());
        std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size()))) - 1;
        return s[std::min(i, s.size() - 1)];
    }
    double mean() const { return std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size()); }
    double deviation_pct() const {
        double m = mean(), v = 0;
        for (double x : ms) v += (x - m) * (x - m);
        return ms.size() > 1 ? 100.0 * std::sqrt(v / static_cast<double>(ms.size() - 1)) / m : 0;
    }
};



Stats run(const std::string& client_name, const Scenario& sc, const std::string& base, bool nodelay,
          double warmup_s, double seconds) {
    const std::string url = base + sc.path;
    const std::string body = request_body(sc.request_bytes);
    // The expected answer: one probe request with a fresh client.
    std::string probe;
    Expect expect;
    {
        auto c = make_client(client_name, nodelay);
        int status = c->post(url, body, probe);
        if (status != 200) abort_run("probe status " + std::to_string(status));
        expect = {probe};
    }
    Stats stats;
    if (sc.streamed) {
        // probe = "<events> events, <bytes> bytes"
        stats.events_per_iteration = std::stod(probe);
        stats.bytes_per_iteration = std::stod(probe.substr(probe.find(", ") + 2));
    }
    const int workers = sc.concurrency;
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < workers; ++i) clients.push_back(make_client(client_name, nodelay));

    std::atomic<bool> stop{false};
    std::barrier start(workers + 1), done(workers + 1);
    std::vector<std::thread> threads;
    auto one_iteration = [&](int w) {
        std::string out;
        for (int k = 0; k < sc.sequential; ++k) check(clients[w]->post(url, body, out), out, expect);
    };
    if (workers > 1) {
        // Persistent workers released by a barrier: thread creation is not measured.
        for (int w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                for (;;) {
                    start.arrive_and_wait();
                    if (stop) return;
                    one_iteration(w);
                    done.arrive_and_wait();
                }
            });
    }
    auto iterate = [&] {
        if (workers == 1) {
            one_iteration(0);
        } else {
            start.arrive_and_wait();
            done.arrive_and_wait();
        }
    };
    auto warm_until = Clock::now() + std::chrono::duration<double>(warmup_s);
    while (Clock::now() < warm_until) iterate();
    nous::bench::reset_peak_rss();
    const std::uint64_t allocated_before = nous::bench::allocated_bytes();
    auto t0 = Clock::now();
    auto until = t0 + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        auto s = Clock::now();
        iterate();
        stats.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    }
    stats.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    stats.peak_rss_kb = nous::bench::peak_rss_kb();
    if (!stats.ms.empty())
        stats.allocated_per_iteration =
            static_cast<double>(nous::bench::allocated_bytes() - allocated_before) / static_cast<double>(stats.ms.size());
    if (workers > 1) {
        stop = true;
        start.arrive_and_wait();
        for (auto& t : threads) t.join();
    }
    return stats;
}

void print_json(const std::string& client, const std::string& scenario, const Stats& s) {
    std::printf("{\"client\":\"%s\",\"scenario\":\"%s\",\"ips\":%.1f,\"median_ms\":%.4f,\"p99_ms\":%.4f,\"n\":%zu,"
                "\"alloc_bytes\":%.0f",
                client.c_str(), scenario.c_str(), s.ips(), s.pct(0.5), s.pct(0.99), s.ms.size(), s.allocated_per_iteration);
    if (s.bytes_per_iteration > 0)
        std::printf(",\"mib_s\":%.1f,\"events_s\":%.0f,\"peak_rss_kb\":%ld", s.ips() * s.bytes_per_iteration / 1048576.0,
                    s.ips() * s.events_per_iteration, s.peak_rss_kb);
    std::printf("}\n");
    std::fflush(stdout);
}

void print_row(const std::string& client, const std::string& scenario, const Stats& s) {
    std::printf("%-13s %-13s %10.1f %9.4f %7.1f%% %9.4f %9.4f %9.4f %9.4f %8zu %9ld %11.0f\n", client.c_str(),
                scenario.c_str(), s.ips(), s.mean(), s.deviation_pct(), s.pct(0.5), s.pct(0.99),
                *std::min_element(s.ms.begin(), s.ms.end()), *std::max_element(s.ms.begin(), s.ms.end()),
                s.ms.size(), s.peak_rss_kb, s.allocated_per_iteration);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::string url_base, scenario, backend = "pooled", client, stream_backend;
    double seconds = 10, warmup = 2;
    int nodelay = 1;
    po::options_description desc("http_backend [options]");
    desc.add_options()("help,h", "help")
        ("url-base", po::value(&url_base), "run against this server; prints one JSON line")
        ("scenario", po::value(&scenario),
         "small_post|parallel_50|large_body|large_seq|sse_firehose|chunked_1m|nagle (default: all)")
        ("seconds", po::value(&seconds), "measurement time per run (default 10)")
        ("warmup", po::value(&warmup), "warm-up time per run (default 2)")
        ("nodelay", po::value(&nodelay), "TCP_NODELAY on the client: 1 or 0")
        ("backend", po::value(&backend), "nous post backend: pooled|curl")
        ("stream-backend", po::value(&stream_backend), "nous stream backend (streaming scenarios)")
        ("cacert", po::value(&g_tls.cacert), "https: trust this CA (PEM) besides the system store")
        ("new-connection", "every iteration opens a fresh connection (cold TCP + TLS; sessions resumed)")
        ("no-resume", "with a fresh connection per iteration, no TLS session is offered: a full handshake each time")
        ("client", po::value(&client),
         "nous-pooled|nous-curl|nous-window|nous-pull|ref-poco|ref-curl|ref-raw|ref-raw-events|ref-openssl|ref-beast "
         "(default: nous-<backend>)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "http_backend: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    g_tls.new_connection = vm.count("new-connection") > 0 || vm.count("no-resume") > 0;
    g_tls.no_resume = vm.count("no-resume") > 0;
#ifdef NOUS_BENCH_HAVE_CURL
    curl_global_init(CURL_GLOBAL_DEFAULT);
#endif
    if (!url_base.empty()) {
        if (client.empty()) client = scenario == "sse_firehose" ? "nous-" + (stream_backend.empty() ? std::string("window") : stream_backend)
                                                                : "nous-" + backend;
        for (const auto& sc : scenarios())
            if (sc.name == scenario) {
                print_json(client, sc.name, run(client, sc, url_base, nodelay != 0, warmup, seconds));
                return 0;
            }
        std::cerr << "http_backend: --url-base needs --scenario small_post|parallel_50|large_body|large_seq|sse_firehose|"
                     "chunked_1m\n";
        return 2;
    }

    std::vector<std::string> clients = {"nous-pooled"};
#ifdef NOUS_HAVE_CURL
    clients.push_back("nous-curl");
#endif
    clients.push_back("ref-poco");
    clients.push_back("ref-raw");
#ifdef NOUS_BENCH_HAVE_CURL
    clients.push_back("ref-curl");
#endif
    if (!client.empty()) clients = {client};
    nous::http::MockServer server;
    server.start();
    std::printf("# in-process mock server, warm-up %.1f s, measurement %.1f s per row; rss_kb = peak RSS of the "
                "whole process (KiB); alloc_bytes = bytes allocated per iteration (process-wide)\n",
                warmup, seconds);
    std::printf("%-13s %-13s %10s %9s %8s %9s %9s %9s %9s %8s %9s %11s\n", "client", "scenario", "ips", "avg_ms", "dev",
                "median_ms", "p99_ms", "min_ms", "max_ms", "n", "rss_kb", "alloc_bytes");
    for (const auto& sc : scenarios()) {
        if (!scenario.empty() && scenario != sc.name) continue;
        if (sc.streamed) {
            // The stream API only: every event decoded. The reference clients have no stream parser.
            for (const char* c : {"nous-window", "nous-pull", "ref-raw-events"}) {
                if (!client.empty() && client != c) continue;
                Stats st = run(c, sc, server.base_url(), nodelay != 0, warmup, seconds);
                print_row(c, sc.name, st);
                std::printf("%-13s %-13s   %.1f MiB/s, %.0f events/s\n", "", "", st.ips() * st.bytes_per_iteration / 1048576.0,
                            st.ips() * st.events_per_iteration);
            }
            continue;
        }
        for (const auto& c : clients) print_row(c, sc.name, run(c, sc, server.base_url(), nodelay != 0, warmup, seconds));
    }
    if (scenario.empty() || scenario == "nagle") {
        // The brief's Nagle cases: (a) client with TCP_NODELAY off against a normal
        // server, (b) a server that writes head and body apart with Nagle on.
        nous::http::MockServerOptions o;
        o.nagle = true;
        nous::http::MockServer nagle_server(o);
        nagle_server.start();
        const Scenario& small = scenarios()[0];
        for (const auto& c : clients) {
            print_row(c, "nagle_client", run(c, small, server.base_url(), false, warmup, seconds));
            print_row(c, "nagle_server", run(c, small, nagle_server.base_url(), true, warmup, seconds));
        }
    }
    return 0;
}

