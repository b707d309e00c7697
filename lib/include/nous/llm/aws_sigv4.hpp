#pragma once
// AWS Signature Version 4, as AWS specifies it for the services other than
// S3, for any AWS request: Bedrock signs its calls with it, and the mock
// checks them with it. The canonical request (each path segment encoded once
// more than on the wire, dot and empty segments removed, the query sorted,
// lower-case trimmed headers), the string to sign, the signing key by the
// HMAC chain, and the Authorization header; OpenSSL does the hashes. Tested
// on AWS's published test suite. docs/platforms.md.

#include <ctime>
#include <string>
#include <string_view>

#include "nous/http/client.hpp"

namespace nous::llm {

struct AwsCredentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  ///< empty: long-term credentials
};

struct SigV4Request {
    std::string method;           ///< "POST"
    std::string path;             ///< as on the wire ("/model/a.b-v1%3A0/converse")
    std::string query;            ///< without '?'
    nous::http::Headers headers;  ///< at least Host; every one is signed
    std::string_view body;
};

/// What signing made: the pieces AWS's test suite checks.
struct SigV4Signature {
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature;      ///< hex
    std::string authorization;  ///< the Authorization header's value
};

/// Signs `request` at `now` (UTC seconds): adds X-Amz-Date,
/// X-Amz-Security-Token (temporary credentials), X-Amz-Content-Sha256
/// (`content_sha256_header`: S3's habit) and Authorization to its headers,
/// replacing any of those it had (a resend is signed anew).
SigV4Signature sigv4_sign(SigV4Request& request, const AwsCredentials& credentials,
                          std::string_view region, std::string_view service, std::time_t now,
                          bool content_sha256_header = false);

}  // namespace nous::llm
