#include "transport/trust_store.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <list>
#include <mutex>
#include <vector>

namespace nous::http::detail {

namespace {

const char* env_or(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : fallback;
}

/// The path with symbolic links resolved; as given when it does not exist.
std::string resolved(const char* path) {
    char buffer[PATH_MAX];
    return ::realpath(path, buffer) != nullptr ? std::string(buffer) : std::string(path);
}

std::atomic<unsigned long> g_parses{0};

/// One system store: the bundle's certificates, parsed once, and a store
/// holding them and the lazy directory lookup.
struct SharedStore {
    SystemTrustPaths paths;
    std::vector<X509*> certificates;  ///< owned; kept for contexts that add them to their own store
    X509_STORE* store = nullptr;      ///< owned (one reference); contexts take their own
};

SharedStore* build(const SystemTrustPaths& paths) {
    auto* made = new SharedStore;
    made->paths = paths;
    made->store = X509_STORE_new();
    if (BIO* bio = BIO_new_file(paths.file.c_str(), "r")) {
        g_parses.fetch_add(1, std::memory_order_relaxed);
        // X509_AUX: the bundle's "TRUSTED CERTIFICATE" entries read too.
        while (X509* cert = PEM_read_bio_X509_AUX(bio, nullptr, nullptr, nullptr)) {
            X509_STORE_add_cert(made->store, cert);
            made->certificates.push_back(cert);
        }
        BIO_free(bio);
    }
    if (!paths.dir.empty()) {
        if (X509_LOOKUP* lookup = X509_STORE_add_lookup(made->store, X509_LOOKUP_hash_dir()))
            X509_LOOKUP_add_dir(lookup, paths.dir.c_str(), X509_FILETYPE_PEM);
    }
    // End of file and a missing file or directory leave errors in the queue:
    // they must not be read as the next TLS call's failure.
    ERR_clear_error();
    return made;
}

/// The store for the paths in force now. Tests change SSL_CERT_FILE or
/// SSL_CERT_DIR between calls: each set of paths gets its store, once.
/// Never destroyed: contexts made from them live until exit.
const SharedStore& shared_store() {
    static std::mutex mutex;
    static auto* stores = new std::list<SharedStore*>;  // guarded by mutex
    const SystemTrustPaths paths = system_trust_paths();
    std::lock_guard lock(mutex);
    for (SharedStore* s : *stores)
        if (s->paths.file == paths.file && s->paths.dir == paths.dir) return *s;
    stores->push_back(build(paths));
    return *stores->back();
}

bool trusts_nothing(SSL_CTX* ctx) {
    X509_STORE* own = SSL_CTX_get_cert_store(ctx);
    return own == nullptr || sk_X509_OBJECT_num(X509_STORE_get0_objects(own)) == 0;
}

void add_to_own_store(SSL_CTX* ctx, const SharedStore& shared) {
    X509_STORE* own = SSL_CTX_get_cert_store(ctx);
    for (X509* cert : shared.certificates) X509_STORE_add_cert(own, cert);  // takes a reference
    if (!shared.paths.dir.empty())
        if (X509_LOOKUP* lookup = X509_STORE_add_lookup(own, X509_LOOKUP_hash_dir()))
            X509_LOOKUP_add_dir(lookup, shared.paths.dir.c_str(), X509_FILETYPE_PEM);
    ERR_clear_error();  // a certificate already in the store is reported, harmlessly
}

}  // namespace

SystemTrustPaths system_trust_paths() {
    // Resolved, so that SSL_CERT_FILE naming the default bundle (as many
    // images set it) shares the default's store.
    return {resolved(env_or(X509_get_default_cert_file_env(), X509_get_default_cert_file())),
            resolved(env_or(X509_get_default_cert_dir_env(), X509_get_default_cert_dir()))};
}

void add_system_trust(SSL_CTX* ctx) {
    const SharedStore& shared = shared_store();
    if (trusts_nothing(ctx)) {
        SSL_CTX_set1_cert_store(ctx, shared.store);  // a reference, no copy
        return;
    }
    add_to_own_store(ctx, shared);
}

void add_system_trust_unshared(SSL_CTX* ctx) { add_to_own_store(ctx, shared_store()); }

unsigned long system_bundle_parses() { return g_parses.load(std::memory_order_relaxed); }

}  // namespace nous::http::detail
