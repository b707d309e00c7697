// ref-beast: Boost.Beast as a careful user writes it.

#ifdef NOUS_BENCH_HAVE_BEAST
#include <Poco/URI.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "client.hpp"
#include "session_keeper.hpp"

namespace bench {

namespace {

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
            sessions.keep_and_shut_down(
                secure->native_handle());  // without waiting for the peer's close_notify
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
            secure = std::make_unique<boost::beast::ssl_stream<boost::beast::tcp_stream>>(
                io, tls_context);
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
        const std::string o =
            uri.getScheme() + "://" + uri.getHost() + ":" + std::to_string(uri.getPort());
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

}  // namespace

std::unique_ptr<Client> make_beast_client(bool nodelay) {
    return std::make_unique<BeastClient>(nodelay);
}

}  // namespace bench
#endif
