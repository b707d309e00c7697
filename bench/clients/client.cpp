// What the clients share, and the client of a --client name.

#include "client.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace bench {

TlsRun g_tls;

void init_clients() {
#ifdef NOUS_BENCH_HAVE_CURL
    init_curl();
#endif
}

void abort_run(const std::string& why) {
    std::cerr << "http_backend: response check failed: " << why << "\n";
    std::exit(1);
}

void check(int status, const std::string& body, const Expect& e) {
    if (status != 200) abort_run("status " + std::to_string(status));
    if (body.size() != e.body.size())
        abort_run("length " + std::to_string(body.size()) + " != " + std::to_string(e.body.size()));
    if (std::memcmp(body.data(), e.body.data(), body.size()) != 0)
        abort_run("body differs from the first response");
}

std::unique_ptr<Client> make_client(const std::string& name, bool nodelay) {
    if (name == "nous-pooled") return make_nous_client(nodelay, "pooled");
    if (name == "nous-curl") return make_nous_client(nodelay, "curl");
    if (name == "nous-window") return make_nous_stream_client(nodelay, "window");
    if (name == "nous-pull") return make_nous_stream_client(nodelay, "pull");
    if (name == "ref-poco") return make_poco_client(nodelay);
    if (name == "ref-raw") return make_raw_client(nodelay, false);
    if (name == "ref-openssl") return make_openssl_client(nodelay);
#ifdef NOUS_BENCH_HAVE_BEAST
    if (name == "ref-beast") return make_beast_client(nodelay);
#endif
    if (name == "ref-raw-events") return make_raw_client(nodelay, true);
#ifdef NOUS_BENCH_HAVE_CURL
    if (name == "ref-curl") return make_curl_client(nodelay);
#endif
    throw std::invalid_argument("unknown client " + name);
}

}  // namespace bench
