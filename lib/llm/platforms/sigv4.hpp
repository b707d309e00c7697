#pragma once
// AWS Signature Version 4 (nous_llm internal), as AWS specifies it for
// services other than S3: the canonical request (each path segment
// URI-encoded once more than it is on the wire, dot segments and empty
// segments removed; the query sorted; lower-case, trimmed headers), the
// string to sign, the signing key by an HMAC chain, and the Authorization
// header. OpenSSL does the hashes and the HMACs. docs/platforms.md.

#include <ctime>
#include <string>
#include <string_view>

#include "nous/http/client.hpp"

namespace nous::llm::detail {

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

/// What signing made: the pieces AWS's test suite checks, and the headers added.
struct SigV4Signature {
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature;      ///< hex
    std::string authorization;  ///< the Authorization header's value
};

/// Signs `request` at `now` (UTC seconds): adds X-Amz-Date,
/// X-Amz-Security-Token (temporary credentials), X-Amz-Content-Sha256
/// (`content_sha256_header`: S3's habit, off for Bedrock) and
/// Authorization to its headers.
SigV4Signature sigv4_sign(SigV4Request& request, const AwsCredentials& credentials,
                          std::string_view region, std::string_view service, std::time_t now,
                          bool content_sha256_header = false);

/// Hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace nous::llm::detail
