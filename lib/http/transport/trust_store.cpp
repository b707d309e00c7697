// The system trust store as two lazy lookups (directory, then bundle).

#include "transport/trust_store.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

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

/// One bundle file, parsed on the first lookup that needs it, then kept.
struct Bundle {
    std::string path;
    std::once_flag parsed;
    std::vector<X509*> certificates;  ///< owned for the process's lifetime; immutable once parsed

    const std::vector<X509*>& get() {
        std::call_once(parsed, [this] {
            if (BIO* bio = BIO_new_file(path.c_str(), "r")) {
                g_parses.fetch_add(1, std::memory_order_relaxed);
                // X509_AUX: the bundle's "TRUSTED CERTIFICATE" entries read too.
                while (X509* cert = PEM_read_bio_X509_AUX(bio, nullptr, nullptr, nullptr))
                    certificates.push_back(cert);
                BIO_free(bio);
            }
            // The end of the file (and a missing file) leave errors in this
            // thread's queue: they must not be read as a TLS call's failure.
            ERR_clear_error();
        });
        return certificates;
    }
};

/// A lookup method that finds issuers in a bundle file. OpenSSL tries a
/// store's lookups only for a subject its in-memory objects lack, in the
/// order they were added: the hashed directory first (on Debian it holds the
/// bundle's certificates, one file each, read only when needed), then this
/// one, which parses the bundle once per process. So the common handshake
/// reads one or two small files, and a CA only in the bundle (appended to it,
/// as Dockerfiles do) is trusted all the same.
int bundle_get_by_subject(X509_LOOKUP* lookup, X509_LOOKUP_TYPE type, const X509_NAME* name,
                          X509_OBJECT* ret) {
    if (type != X509_LU_X509) return 0;
    auto* bundle = static_cast<Bundle*>(X509_LOOKUP_get_method_data(lookup));
    if (bundle == nullptr) return 0;
    X509_STORE* store = X509_LOOKUP_get_store(lookup);
    X509* found = nullptr;
    for (X509* cert : bundle->get()) {
        if (X509_NAME_cmp(X509_get_subject_name(cert), name) != 0) continue;
        // Every certificate of that subject goes into the store (a CA may
        // have been re-issued); OpenSSL then picks the right issuer.
        if (store != nullptr) X509_STORE_add_cert(store, cert);
        if (found == nullptr) found = cert;
    }
    ERR_clear_error();  // "certificate already in the store" is harmless
    return found != nullptr && X509_OBJECT_set1_X509(ret, found) == 1 ? 1 : 0;
}

X509_LOOKUP_METHOD* bundle_method() {
    static X509_LOOKUP_METHOD* method = [] {
        X509_LOOKUP_METHOD* m = X509_LOOKUP_meth_new("nous system bundle");
        X509_LOOKUP_meth_set_get_by_subject(m, &bundle_get_by_subject);
        return m;
    }();
    return method;
}

/// The bundles and stores of every set of paths seen (tests change
/// SSL_CERT_FILE / SSL_CERT_DIR between calls). Never destroyed: contexts
/// made from them live until exit.
struct Stores {
    std::mutex mutex;
    std::list<Bundle> bundles;  ///< guarded by mutex (elements never move)
    struct Shared {
        SystemTrustPaths paths;
        X509_STORE* store;
    };
    std::list<Shared> shared;  ///< guarded by mutex
};

Stores& stores() {
    static auto* s = new Stores;
    return *s;
}

Bundle& bundle_for(const std::string& path) {
    Stores& s = stores();
    std::lock_guard lock(s.mutex);
    for (Bundle& b : s.bundles)
        if (b.path == path) return b;
    Bundle& made = s.bundles.emplace_back();
    made.path = path;
    return made;
}

/// Adds the directory and the bundle lookups to `store`: nothing is read yet.
void add_lookups(X509_STORE* store, const SystemTrustPaths& paths) {
    if (!paths.dir.empty())
        if (X509_LOOKUP* dir = X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir()))
            X509_LOOKUP_add_dir(dir, paths.dir.c_str(), X509_FILETYPE_PEM);
    if (!paths.file.empty())
        if (X509_LOOKUP* file = X509_STORE_add_lookup(store, bundle_method()))
            X509_LOOKUP_set_method_data(file, &bundle_for(paths.file));
    ERR_clear_error();
}

X509_STORE* shared_store() {
    const SystemTrustPaths paths = system_trust_paths();
    Stores& s = stores();
    {
        std::lock_guard lock(s.mutex);
        for (const auto& shared : s.shared)
            if (shared.paths.file == paths.file && shared.paths.dir == paths.dir)
                return shared.store;
    }
    X509_STORE* store = X509_STORE_new();
    add_lookups(store, paths);
    std::lock_guard lock(s.mutex);
    for (const auto& shared : s.shared)  // another thread made it meanwhile
        if (shared.paths.file == paths.file && shared.paths.dir == paths.dir) {
            X509_STORE_free(store);
            return shared.store;
        }
    s.shared.push_back({paths, store});
    return store;
}

bool trusts_nothing(SSL_CTX* ctx) {
    X509_STORE* own = SSL_CTX_get_cert_store(ctx);
    return own == nullptr || sk_X509_OBJECT_num(X509_STORE_get0_objects(own)) == 0;
}

}  // namespace

SystemTrustPaths system_trust_paths() {
    // Resolved, so that SSL_CERT_FILE naming the default bundle (as many
    // images set it) shares the default's store.
    return {resolved(env_or(X509_get_default_cert_file_env(), X509_get_default_cert_file())),
            resolved(env_or(X509_get_default_cert_dir_env(), X509_get_default_cert_dir()))};
}

void add_system_trust(SSL_CTX* ctx) {
    if (trusts_nothing(ctx)) {
        SSL_CTX_set1_cert_store(ctx, shared_store());  // a reference, no copy
        return;
    }
    add_system_trust_unshared(ctx);
}

void add_system_trust_unshared(SSL_CTX* ctx) {
    add_lookups(SSL_CTX_get_cert_store(ctx), system_trust_paths());
}

unsigned long system_bundle_parses() { return g_parses.load(std::memory_order_relaxed); }

}  // namespace nous::http::detail
