#pragma once
// bench/http_backend's clients: one instance per worker thread, each a way a
// careful user would call a server (ours, and the references we measure
// against). One file per client; this is what they share.

#include <memory>
#include <string>

namespace bench {

/// https settings of the run: the CA to trust, and whether every iteration
/// opens a fresh connection (cold TCP + TLS; resumption as each client does it).
struct TlsRun {
    std::string cacert;
    bool new_connection = false;
    bool no_resume =
        false;  ///< with new_connection: no session offered, a full handshake each time
};
extern TlsRun g_tls;

/// Status 200, the expected length, the same bytes as the first response:
/// anything else aborts the run. A memcmp: no costlier than a peer's check.
struct Expect {
    std::string body;
};

[[noreturn]] void abort_run(const std::string& why);
void check(int status, const std::string& body, const Expect& e);

struct Client {
    virtual ~Client() = default;
    /// POSTs body to url; returns status and fills `out`.
    virtual int post(const std::string& url, const std::string& body, std::string& out) = 0;
};

/// Once per process, before any client is made (libcurl's global init).
void init_clients();

/// The client of a --client name; throws std::invalid_argument for an unknown one.
std::unique_ptr<Client> make_client(const std::string& name, bool nodelay);

// One maker per client file.
std::unique_ptr<Client> make_nous_client(bool nodelay, const std::string& backend);
std::unique_ptr<Client> make_nous_stream_client(bool nodelay, const std::string& stream_backend);
std::unique_ptr<Client> make_poco_client(bool nodelay);
std::unique_ptr<Client> make_raw_client(bool nodelay, bool events_mode);
std::unique_ptr<Client> make_openssl_client(bool nodelay);
#ifdef NOUS_BENCH_HAVE_CURL
std::unique_ptr<Client> make_curl_client(bool nodelay);
void init_curl();
#endif
#ifdef NOUS_BENCH_HAVE_BEAST
std::unique_ptr<Client> make_beast_client(bool nodelay);
#endif

}  // namespace bench
