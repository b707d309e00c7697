// Google's application-default credentials (google_credentials.hpp).

#include "platforms/google_credentials.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "json/provider_json.hpp"
#include "nous/http/json.hpp"
#include "platforms/percent_encoding.hpp"

namespace nous::llm::detail {

namespace {

using Clock = std::chrono::steady_clock;

Error auth_error(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

std::string base64url(std::string_view data) {
    static constexpr char table[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                           (static_cast<unsigned char>(data[i + 1]) << 8) |
                           static_cast<unsigned char>(data[i + 2]);
        out += table[v >> 18];
        out += table[(v >> 12) & 63];
        out += table[(v >> 6) & 63];
        out += table[v & 63];
    }
    if (i < data.size()) {
        unsigned v = static_cast<unsigned char>(data[i]) << 16;
        if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
        out += table[v >> 18];
        out += table[(v >> 12) & 63];
        if (i + 1 < data.size()) out += table[(v >> 6) & 63];
    }
    return out;
}

/// RS256 of `input` with the PEM private key; nullopt when the key does not read.
std::optional<std::string> rs256(const std::string& pem, std::string_view input) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    if (!key) return std::nullopt;
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    std::string signature;
    std::size_t size = 0;
    const bool ok =
        ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
        EVP_DigestSign(ctx, nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1 &&
        (signature.resize(size), true) &&
        EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(signature.data()), &size,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    if (!ok) return std::nullopt;
    signature.resize(size);
    return signature;
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Token {
    std::string value;
    Clock::time_point refresh_at{};
};

struct Cache {
    std::mutex mutex;  ///< held through a refresh: one thread asks, the others wait
    std::map<std::string, Token> tokens;
};

Cache& cache() {
    static Cache c;
    return c;
}

/// Posts the token request; the answer's access_token and expires_in, or the endpoint's words.
Result<Token> token_exchange(const std::string& token_uri, const std::string& form) {
    auto response =
        nous::http::post(token_uri, form, {{"Content-Type", "application/x-www-form-urlencoded"}});
    if (!response) {
        Error e = response.error();
        if (!e.body.empty())
            if (auto doc = nous::http::parse_json(e.body); doc && doc.value()->IsObject()) {
                const std::string error = string_member(*doc.value(), "error").value_or("");
                const std::string why =
                    string_member(*doc.value(), "error_description").value_or("");
                e.message =
                    "the Google token endpoint refused: " + error + (why.empty() ? "" : ": " + why);
            }
        e.body.clear();  // never the request's assertion or secrets, only the words above
        return e;
    }
    auto doc = nous::http::parse_json(response->body);
    if (!doc || !doc.value()->IsObject())
        return auth_error("the Google token endpoint answered no JSON object");
    auto token = string_member(*doc.value(), "access_token");
    if (!token || token->empty())
        return auth_error("the Google token endpoint answered no access_token");
    const std::int64_t expires = int_member(*doc.value(), "expires_in").value_or(3600);
    // Kept until 5 minutes before it expires.
    return Token{*token,
                 Clock::now() + std::chrono::seconds(std::max<std::int64_t>(0, expires - 300))};
}

/// The GKE/GCE metadata server's token for the instance's default service
/// account (host GCE_METADATA_HOST, else metadata.google.internal; 1 s bound).
Result<Token> from_metadata_server() {
    const char* host_env = std::getenv("GCE_METADATA_HOST");
    const std::string host = host_env && *host_env ? host_env : "metadata.google.internal";
    nous::http::Options o;
    o.max_retries = 0;
    o.connect_timeout = nous::http::Milliseconds(1000);
    o.total_timeout = nous::http::Milliseconds(1000);
    auto r = nous::http::request(
        "GET", "http://" + host + "/computeMetadata/v1/instance/service-accounts/default/token", {},
        {{"Metadata-Flavor", "Google"}}, o);
    if (!r)
        return auth_error(
            "no Google credentials: GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, "
            "gcloud's application_default_credentials.json, or the metadata server at " +
            host + " (GCE_METADATA_HOST), which refused or stayed silent past 1 s (" +
            r.error().message + ")");
    auto doc = nous::http::parse_json(r->body);
    if (!doc || !doc.value()->IsObject())
        return auth_error("the metadata server at " + host + " answered no JSON object");
    auto token = string_member(*doc.value(), "access_token");
    if (!token || token->empty())
        return auth_error("the metadata server at " + host + " answered no access_token");
    const std::int64_t expires = int_member(*doc.value(), "expires_in").value_or(3600);
    return Token{*token,
                 Clock::now() + std::chrono::seconds(std::max<std::int64_t>(0, expires - 300))};
}

Result<Token> fetch(const std::string& key_file) {
    if (key_file.empty()) return from_metadata_server();
    auto text = read_file(key_file);
    if (!text) return auth_error("cannot read the Google key file " + key_file);
    auto doc = nous::http::parse_json(*text);
    if (!doc || !doc.value()->IsObject())
        return auth_error("the Google key file " + key_file + " is not a JSON object");
    const auto& root = *doc.value();
    const std::string type = string_member(root, "type").value_or("");
    const std::string token_uri =
        string_member(root, "token_uri").value_or("https://oauth2.googleapis.com/token");
    if (type == "authorized_user") {
        const std::string id = string_member(root, "client_id").value_or(""),
                          secret = string_member(root, "client_secret").value_or(""),
                          refresh = string_member(root, "refresh_token").value_or("");
        if (id.empty() || secret.empty() || refresh.empty())
            return auth_error("the authorized_user file " + key_file +
                              " needs client_id, client_secret and refresh_token");
        return token_exchange(token_uri,
                              "grant_type=refresh_token&client_id=" + percent_encode(id) +
                                  "&client_secret=" + percent_encode(secret) +
                                  "&refresh_token=" + percent_encode(refresh));
    }
    if (type != "service_account")
        return auth_error("the Google key file " + key_file +
                          " is neither a service_account nor an authorized_user file");
    const std::string email = string_member(root, "client_email").value_or("");
    const std::string pem = string_member(root, "private_key").value_or("");
    if (email.empty() || pem.empty())
        return auth_error("the service account file " + key_file +
                          " needs client_email and private_key");
    const long long now = static_cast<long long>(std::time(nullptr));
    const std::string header = base64url(R"({"alg":"RS256","typ":"JWT"})");
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("iss");
    w.String(email.c_str());
    w.Key("scope");
    w.String("https://www.googleapis.com/auth/cloud-platform");
    w.Key("aud");
    w.String(token_uri.c_str());
    w.Key("iat");
    w.Int64(now);
    w.Key("exp");
    w.Int64(now + 3600);
    w.EndObject();
    const std::string signing_input = header + "." + base64url(buffer.GetString());
    auto signature = rs256(pem, signing_input);
    if (!signature) return auth_error("the private_key of " + key_file + " is not a PEM RSA key");
    return token_exchange(
        token_uri, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" +
                       signing_input + "." + base64url(*signature));
}

}  // namespace

std::string google_key_file() {
    if (const char* file = std::getenv("GOOGLE_APPLICATION_CREDENTIALS"); file && *file)
        return file;
    const char* home = std::getenv("HOME");
    const std::string gcloud =
        std::string(home ? home : ".") + "/.config/gcloud/application_default_credentials.json";
    return std::ifstream(gcloud) ? gcloud : std::string();
}

std::string google_key_project(const std::string& key_file) {
    // Read once per file for the process: every call asks for it.
    static std::mutex mutex;
    static std::map<std::string, std::string> projects;
    std::lock_guard lock(mutex);
    if (auto it = projects.find(key_file); it != projects.end()) return it->second;
    std::string project;
    if (auto text = read_file(key_file))
        if (auto doc = nous::http::parse_json(*text); doc && doc.value()->IsObject())
            project = string_member(*doc.value(), "project_id").value_or("");
    projects[key_file] = project;
    return project;
}

/// The cache's key: the key file, or the metadata server's host.
static std::string source_of(const std::string& key_file) {
    if (!key_file.empty()) return key_file;
    const char* host = std::getenv("GCE_METADATA_HOST");
    return std::string("metadata:") + (host && *host ? host : "metadata.google.internal");
}

Result<std::string> google_access_token(const std::string& key_file) {
    Cache& c = cache();
    const std::string source = source_of(key_file);
    std::lock_guard lock(c.mutex);
    auto it = c.tokens.find(source);
    if (it != c.tokens.end() && Clock::now() < it->second.refresh_at) return it->second.value;
    auto token = fetch(key_file);
    if (!token) return token.error();
    c.tokens[source] = token.value();
    return token->value;
}

void forget_google_token(const std::string& key_file) {
    Cache& c = cache();
    const std::string source = source_of(key_file);
    std::lock_guard lock(c.mutex);
    c.tokens.erase(source);
}

}  // namespace nous::llm::detail
