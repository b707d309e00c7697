// ref-curl: libcurl's easy interface, one reused handle per thread, TCP_NODELAY on.

#ifdef NOUS_BENCH_HAVE_CURL
#include <Poco/URI.h>
#include <curl/curl.h>

#include <cstring>
#include <string>

#include "client.hpp"

namespace bench {

namespace {

struct CurlClient : Client {
    CURL* easy = curl_easy_init();
    curl_slist* headers = nullptr;
    explicit CurlClient(bool nodelay) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        headers =
            curl_slist_append(headers, "Expect:");  // no 100-continue round trip for large bodies
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, nodelay ? 1L : 0L);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(
            easy, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
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

}  // namespace

std::unique_ptr<Client> make_curl_client(bool nodelay) {
    return std::make_unique<CurlClient>(nodelay);
}

void init_curl() { curl_global_init(CURL_GLOBAL_DEFAULT); }

}  // namespace bench
#endif
