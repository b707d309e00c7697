#include "transport/trust_store.hpp"

#include <dirent.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <climits>
#include <cstdlib>
#include <string_view>

namespace nous::http::detail {

namespace {

/// The path with symbolic links resolved, or empty.
std::string resolved(const char* path) {
    char buffer[PATH_MAX];
    return path != nullptr && ::realpath(path, buffer) != nullptr ? std::string(buffer) : std::string();
}

/// Whether `dir` holds OpenSSL's subject-hash links ("1a2b3c4d.0").
bool has_hash_links(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return false;
    bool found = false;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name.size() == 10 && name.substr(8) == ".0" && name.find_first_not_of("0123456789abcdef") == 8) {
            found = true;
            break;
        }
    }
    ::closedir(d);
    return found;
}

const char* env_or(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

std::string lazy_system_cert_dir() {
    const std::string system_dir = resolved(X509_get_default_cert_dir());
    if (system_dir.empty()) return {};
    const char* file = env_or(X509_get_default_cert_file_env(), X509_get_default_cert_file());
    const char* dir = env_or(X509_get_default_cert_dir_env(), X509_get_default_cert_dir());
    if (resolved(file) != resolved(X509_get_default_cert_file()) || resolved(dir) != system_dir) return {};
    return has_hash_links(system_dir) ? system_dir : std::string();
}

void add_system_trust(SSL_CTX* ctx) {
    const std::string dir = lazy_system_cert_dir();
    if (!dir.empty() && SSL_CTX_load_verify_dir(ctx, dir.c_str()) == 1) return;
    SSL_CTX_set_default_verify_paths(ctx);
}

}  // namespace nous::http::detail
