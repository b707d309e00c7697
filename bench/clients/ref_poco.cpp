// ref-poco: POCO's HTTPClientSession as a careful user writes it (HTTP/1.1
// keep-alive, one session per thread, bulk reads).

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/URI.h>

#include <istream>
#include <ostream>

#include "client.hpp"

namespace bench {

namespace {

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
                session = std::make_unique<Poco::Net::HTTPSClientSession>(uri.getHost(),
                                                                          uri.getPort(), context);
            } else {
                session =
                    std::make_unique<Poco::Net::HTTPClientSession>(uri.getHost(), uri.getPort());
            }
            session->setKeepAlive(true);
            session->setKeepAliveTimeout(Poco::Timespan(3600, 0));
            origin = o;
        }
        if (g_tls.new_connection) session->reset();
        for (int attempt = 0;; ++attempt) {
            try {
                Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST,
                                               uri.getPathAndQuery(),
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

}  // namespace

std::unique_ptr<Client> make_poco_client(bool nodelay) {
    return std::make_unique<PocoClient>(nodelay);
}

}  // namespace bench
