// The mock's Google token endpoint and bearer check (google_tokens.hpp).

#include "google_tokens.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <rapidjson/document.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "provider_formats.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

std::string base64url_decode(std::string_view text) {
    std::string out;
    unsigned value = 0;
    int bits = 0;
    for (char c : text) {
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '-')
            v = 62;
        else if (c == '_')
            v = 63;
        else
            return {};
        value = (value << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((value >> bits) & 0xFF);
        }
    }
    return out;
}

std::string form_value(const std::string& body, const std::string& name) {
    for (std::size_t start = 0; start < body.size();) {
        std::size_t end = body.find('&', start);
        if (end == std::string::npos) end = body.size();
        const std::string pair = body.substr(start, end - start);
        if (pair.rfind(name + "=", 0) == 0)
            return percent_decoded_form(pair.substr(name.size() + 1));
        start = end + 1;
    }
    return {};
}

bool rs256_verifies(const std::string& pem, std::string_view input, std::string_view signature) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    if (!key) return false;
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const bool ok =
        ctx && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
        EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                         input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    return ok;
}

void oauth_error(MockResponse& r, int status, const char* error, const char* description) {
    r.status = status;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = std::string(R"({"error":")") + error + R"(","error_description":)" +
             json_string(description) + "}";
}

}  // namespace

std::string percent_decoded_form(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '+') {
            out += ' ';
        } else if (text[i] == '%' && i + 2 < text.size()) {
            out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

GoogleTokens::GoogleTokens(const std::string& key_file) {
    if (key_file.empty()) return;
    std::ifstream in(key_file);
    std::stringstream s;
    s << in.rdbuf();
    rapidjson::Document doc;
    doc.Parse(s.str().c_str());
    if (doc.HasParseError() || !doc.IsObject())
        throw std::invalid_argument("--google-key-file: " + key_file + " is not a JSON key file");
    key_pem_ = string_at(find(doc, "private_key"));
    client_email_ = string_at(find(doc, "client_email"));
    token_uri_ = string_at(find(doc, "token_uri"));
    if (key_pem_.empty() || client_email_.empty())
        throw std::invalid_argument("--google-key-file: " + key_file +
                                    " needs private_key and client_email");
    checking_ = true;
}

void GoogleTokens::answer(const MockRequest& request, MockResponse& response) {
    const std::string grant = form_value(request.body, "grant_type");
    if (grant == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        const std::string assertion = form_value(request.body, "assertion");
        const auto dot1 = assertion.find('.'), dot2 = assertion.rfind('.');
        if (dot1 == std::string::npos || dot1 == dot2)
            return oauth_error(response, 400, "invalid_request", "Invalid JWT.");
        if (checking_) {
            if (!rs256_verifies(key_pem_, std::string_view(assertion).substr(0, dot2),
                                base64url_decode(std::string_view(assertion).substr(dot2 + 1))))
                return oauth_error(response, 400, "invalid_grant", "Invalid JWT Signature.");
            rapidjson::Document claims;
            const std::string json =
                base64url_decode(std::string_view(assertion).substr(dot1 + 1, dot2 - dot1 - 1));
            claims.Parse(json.c_str());
            const auto exp = find(claims, "exp");
            if (claims.HasParseError() || string_at(find(claims, "iss")) != client_email_ ||
                (!token_uri_.empty() && string_at(find(claims, "aud")) != token_uri_))
                return oauth_error(response, 400, "invalid_grant", "Invalid JWT: iss or aud.");
            if (!exp || !exp->IsInt64() ||
                exp->GetInt64() < static_cast<long long>(std::time(nullptr)))
                return oauth_error(response, 400, "invalid_grant",
                                   "Invalid JWT: Token must be a short-lived token (60 minutes) "
                                   "and in a reasonable timeframe.");
        }
    } else if (grant == "refresh_token") {
        if (form_value(request.body, "refresh_token").empty())
            return oauth_error(response, 400, "invalid_grant", "Bad Request");
    } else {
        return oauth_error(response, 400, "unsupported_grant_type", "Invalid grant_type.");
    }
    std::string token;
    {
        std::lock_guard lock(mutex_);
        token = "ya29.mock-" + std::to_string(++next_);
        issued_.insert(token);
    }
    response.status = 200;
    response.headers = {{"Content-Type", "application/json"}};
    response.body =
        R"({"access_token":")" + token + R"(","expires_in":3599,"token_type":"Bearer"})";
}

bool GoogleTokens::accepts(const MockRequest& request, MockResponse& refusal) {
    const std::string auth = request.header("authorization").value_or("");
    const bool bearer = auth.rfind("Bearer ", 0) == 0;
    if (bearer && !checking_) return true;
    if (bearer) {
        std::lock_guard lock(mutex_);
        if (issued_.count(auth.substr(7))) return true;
    }
    refusal.status = 401;
    refusal.headers = {{"Content-Type", "application/json"}};
    refusal.body =
        R"({"error":{"code":401,"message":"Request had invalid authentication credentials. )"
        R"(Expected OAuth 2 access token, login cookie or other valid authentication credential.",)"
        R"("status":"UNAUTHENTICATED"}})";
    return false;
}

bool is_vertex_route(const std::string& route) {
    return route.rfind("/v1/projects/", 0) == 0 && route.find("/publishers/") != std::string::npos;
}

}  // namespace nous::http::mock
