// The mock's credential check (credentials.hpp).

#include "credentials.hpp"

#include <cstdlib>
#include <ctime>

#include "chat_requests.hpp"
#include "embedding_replies.hpp"
#include "nous/llm/aws_sigv4.hpp"
#include "token_counts.hpp"

namespace nous::http::mock {

bool is_model_route(const std::string& method, const std::string& route) {
    return chat_route(method, route) || embedding_route(method, route) ||
           count_route(method, route);
}

bool credential_accepted(const MockRequest& request, const std::string& route,
                         const std::string& key, MockResponse& refusal) {
    const bool azure = route.rfind("/openai/", 0) == 0;
    const auto bearer = request.header("authorization");
    if (bearer && *bearer == "Bearer " + key) return true;
    for (const char* name : {"x-api-key", "x-goog-api-key", "api-key"})
        if (auto value = request.header(name); value && *value == key) return true;
    refusal.status = 401;
    refusal.headers = {{"Content-Type", "application/json"}};
    if (azure) {
        // Azure OpenAI's own words for a wrong api-key.
        refusal.body =
            R"({"error":{"code":"401","message":"Access denied due to invalid subscription key or )"
            R"(wrong API endpoint. Make sure to provide a valid key for an active subscription and )"
            R"(use a correct regional API endpoint for your resource."}})";
    } else {
        refusal.body =
            R"({"error":{"message":"Incorrect API key provided.","type":"invalid_request_error",)"
            R"("code":"invalid_api_key"}})";
    }
    return false;
}

namespace {

MockResponse aws_refusal(const char* type, const std::string& message) {
    MockResponse r;
    r.status = 403;
    r.headers = {{"Content-Type", "application/json"}, {"x-amzn-ErrorType", type}};
    r.body = R"({"message":)" + json_string(message) + "}";
    return r;
}

/// The value after `name=` in an Authorization header, up to the next comma.
std::string auth_part(const std::string& auth, const std::string& name) {
    const auto at = auth.find(name + "=");
    if (at == std::string::npos) return {};
    const auto start = at + name.size() + 1;
    return auth.substr(start, auth.find(',', start) - start);
}

std::time_t amz_time(const std::string& stamp) {
    std::tm tm{};
    if (!strptime(stamp.c_str(), "%Y%m%dT%H%M%SZ", &tm)) return 0;
    return timegm(&tm);
}

std::string amz_stamp(std::time_t t) {
    std::tm utc{};
    gmtime_r(&t, &utc);
    char out[17];
    std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &utc);
    return out;
}

}  // namespace

bool aws_signature_accepted(const MockRequest& request, const std::string& secret,
                            MockResponse& refusal) {
    const std::string auth = request.header("authorization").value_or("");
    if (auth.rfind("Bearer ", 0) == 0) return true;
    if (auth.rfind("AWS4-HMAC-SHA256 ", 0) != 0) {
        refusal =
            aws_refusal("MissingAuthenticationTokenException", "Missing Authentication Token");
        return false;
    }
    // Credential=AKID/DATE/REGION/SERVICE/aws4_request
    const std::string credential = auth_part(auth, "Credential");
    std::vector<std::string> scope;
    for (std::size_t start = 0; start <= credential.size();) {
        const auto slash = credential.find('/', start);
        scope.push_back(credential.substr(start, slash - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    const std::string stamp = request.header("x-amz-date").value_or("");
    const std::time_t signed_at = amz_time(stamp);
    if (scope.size() != 5 || signed_at == 0) {
        refusal = aws_refusal("IncompleteSignatureException",
                              "Authorization header requires 'Credential' and a valid X-Amz-Date.");
        return false;
    }
    const std::time_t now = std::time(nullptr);
    if (signed_at < now - 300 || signed_at > now + 300) {
        refusal = aws_refusal("InvalidSignatureException",
                              "Signature expired: " + stamp + " is now earlier than " +
                                  amz_stamp(now - 300) + " (" + amz_stamp(now) + " - 5 min.)");
        return false;
    }
    // The signed headers as received, less the ones the signer adds itself.
    nous::llm::SigV4Request again;
    again.method = request.method;
    const auto q = request.target.find('?');
    again.path = request.target.substr(0, q);
    if (q != std::string::npos) again.query = request.target.substr(q + 1);
    again.body = request.body;
    const std::string signed_headers = auth_part(auth, "SignedHeaders");
    bool content_sha = false;
    for (std::size_t start = 0; start <= signed_headers.size();) {
        const auto semi = signed_headers.find(';', start);
        const std::string name = signed_headers.substr(start, semi - start);
        if (name == "x-amz-content-sha256")
            content_sha = true;
        else if (name != "x-amz-date" && name != "x-amz-security-token")
            again.headers.emplace_back(name, request.header(name).value_or(""));
        if (semi == std::string::npos) break;
        start = semi + 1;
    }
    const nous::llm::AwsCredentials credentials{
        scope[0], secret, request.header("x-amz-security-token").value_or("")};
    const auto recomputed =
        nous::llm::sigv4_sign(again, credentials, scope[2], scope[3], signed_at, content_sha);
    if (recomputed.signature == auth_part(auth, "Signature")) return true;
    refusal = aws_refusal("InvalidSignatureException",
                          "The request signature we calculated does not match the signature you "
                          "provided. Check your AWS Secret Access Key and signing method. Consult "
                          "the service documentation for details.");
    return false;
}

}  // namespace nous::http::mock
