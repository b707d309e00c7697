// AWS Signature Version 4 (nous/llm/aws_sigv4.hpp).

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "json/ascii.hpp"
#include "nous/llm/aws_sigv4.hpp"
#include "platforms/percent_encoding.hpp"

namespace nous::llm {

using detail::percent_encode;

namespace {

std::string hex(const unsigned char* data, std::size_t size) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(size * 2, '0');
    for (std::size_t i = 0; i < size; ++i) {
        out[2 * i] = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 15];
    }
    return out;
}

std::string hmac(std::string_view key, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &size);
    return std::string(reinterpret_cast<const char*>(out), size);
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() &&
            std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

/// The canonical URI: dot segments and empty segments removed (services
/// other than S3 normalize), then each segment encoded, so a wire path's
/// `%3A` is `%253A` here (the "double encoding" of non-S3 services).
std::string canonical_uri(std::string_view path) {
    std::vector<std::string_view> segments;
    std::size_t start = path.empty() || path[0] != '/' ? 0 : 1;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view segment = path.substr(start, end - start);
        if (segment == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!segment.empty() && segment != ".") {
            segments.push_back(segment);
        }
        start = end + 1;
    }
    const bool trailing_slash =
        (!path.empty() && path.back() == '/') || path.ends_with("/.") || path.ends_with("/..");
    std::string out = "/";
    for (std::size_t i = 0; i < segments.size(); ++i) {
        if (i) out += '/';
        out += percent_encode(segments[i]);
    }
    if (trailing_slash && !segments.empty()) out += '/';
    return out;
}

/// Parameters decoded, encoded again the one canonical way, sorted by name then value.
std::string canonical_query(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> params;
    std::size_t start = 0;
    while (start < query.size()) {
        std::size_t end = query.find('&', start);
        if (end == std::string_view::npos) end = query.size();
        const std::string_view param = query.substr(start, end - start);
        if (!param.empty()) {
            const std::size_t eq = param.find('=');
            params.emplace_back(percent_encode(percent_decode(param.substr(0, eq))),
                                eq == std::string_view::npos
                                    ? std::string()
                                    : percent_encode(percent_decode(param.substr(eq + 1))));
        }
        start = end + 1;
    }
    std::sort(params.begin(), params.end());
    std::string out;
    for (const auto& [name, value] : params) {
        if (!out.empty()) out += '&';
        out += name + "=" + value;
    }
    return out;
}

/// A header value trimmed, its runs of whitespace one space.
std::string canonical_value(std::string_view value) {
    std::string out;
    bool space = false;
    for (char c : value) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

}  // namespace

namespace {

std::string sha256_hex(std::string_view data) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
    return hex(digest, sizeof digest);
}

}  // namespace

SigV4Signature sigv4_sign(SigV4Request& request, const AwsCredentials& credentials,
                          std::string_view region, std::string_view service, std::time_t now,
                          bool content_sha256_header) {
    std::tm utc{};
    gmtime_r(&now, &utc);
    char amz_date[17], date[9];
    std::strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &utc);
    std::strftime(date, sizeof date, "%Y%m%d", &utc);
    const std::string payload_hash = sha256_hex(request.body);

    // A resend is signed again: the headers this signer adds replace any it added before.
    std::erase_if(request.headers, [](const auto& h) {
        return nous::http::header_name_equals(h.first, "x-amz-date") ||
               nous::http::header_name_equals(h.first, "authorization") ||
               nous::http::header_name_equals(h.first, "x-amz-security-token") ||
               nous::http::header_name_equals(h.first, "x-amz-content-sha256");
    });
    request.headers.emplace_back("X-Amz-Date", amz_date);
    if (!credentials.session_token.empty())
        request.headers.emplace_back("X-Amz-Security-Token", credentials.session_token);
    if (content_sha256_header) request.headers.emplace_back("X-Amz-Content-Sha256", payload_hash);

    // Lower-case names, sorted; a repeated name's values joined by commas in order.
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& [name, value] : request.headers) {
        std::string lower = detail::ascii_lowered(name);
        auto same = std::find_if(headers.begin(), headers.end(),
                                 [&](const auto& h) { return h.first == lower; });
        if (same != headers.end())
            same->second += "," + canonical_value(value);
        else
            headers.emplace_back(std::move(lower), canonical_value(value));
    }
    std::stable_sort(headers.begin(), headers.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string canonical_headers, signed_headers;
    for (const auto& [name, value] : headers) {
        canonical_headers += name + ":" + value + "\n";
        if (!signed_headers.empty()) signed_headers += ';';
        signed_headers += name;
    }

    SigV4Signature s;
    s.canonical_request = request.method + "\n" + canonical_uri(request.path) + "\n" +
                          canonical_query(request.query) + "\n" + canonical_headers + "\n" +
                          signed_headers + "\n" + payload_hash;
    const std::string scope = std::string(date) + "/" + std::string(region) + "/" +
                              std::string(service) + "/aws4_request";
    s.string_to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" +
                       sha256_hex(s.canonical_request);
    const std::string key_date = hmac("AWS4" + credentials.secret_access_key, date);
    const std::string key_region = hmac(key_date, region);
    const std::string key_service = hmac(key_region, service);
    const std::string key_signing = hmac(key_service, "aws4_request");
    const std::string raw = hmac(key_signing, s.string_to_sign);
    s.signature = hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
    s.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                      ", SignedHeaders=" + signed_headers + ", Signature=" + s.signature;
    request.headers.emplace_back("Authorization", s.authorization);
    return s;
}

}  // namespace nous::llm
