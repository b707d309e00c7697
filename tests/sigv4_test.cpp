// SigV4: every header-signing case of AWS's published test suite
// (tests/fixtures/sigv4/, from awslabs/aws-c-auth) gives AWS's canonical
// request, string to sign and signature; a Bedrock request for a model id
// with a colon is signed over the double-encoded path; a resend is signed
// anew and the secret appears in no header.

#include <rapidjson/document.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nous/llm/aws_sigv4.hpp"

using namespace nous::llm;

namespace {

std::string read(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

/// request.txt: "METHOD PATH?QUERY HTTP/1.1", headers "Name:value" (a line
/// starting with white space continues the last value), a blank line, the body.
SigV4Request parse_request(const std::string& text) {
    SigV4Request r;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
    r.method = line.substr(0, sp1);
    const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const auto q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    std::string body;
    bool in_body = false;
    while (std::getline(in, line)) {
        if (in_body) {
            body += (body.empty() ? "" : "\n") + line;
            continue;
        }
        if (line.empty()) {
            in_body = true;
            continue;
        }
        if ((line[0] == ' ' || line[0] == '\t') && !r.headers.empty()) {
            r.headers.back().second += " " + line;
            continue;
        }
        const auto colon = line.find(':');
        r.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
    }
    static std::string kept;  // the body outlives the view
    kept = body;
    r.body = kept;
    return r;
}

std::time_t utc_seconds(const std::string& iso) {
    std::tm tm{};
    strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return timegm(&tm);
}

}  // namespace

TEST_CASE("SigV4: AWS's test suite, case by case: canonical request, string to sign, signature") {
    const std::filesystem::path root = std::string(NOUS_FIXTURES) + "/sigv4";
    std::size_t cases = 0;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
        if (!entry.is_directory()) continue;
        const auto dir = entry.path();
        INFO(dir.filename().string());
        rapidjson::Document context;
        const std::string json = read(dir / "context.json");
        context.Parse(json.c_str());
        REQUIRE_FALSE(context.HasParseError());
        AwsCredentials credentials;
        credentials.access_key_id = context["credentials"]["access_key_id"].GetString();
        credentials.secret_access_key = context["credentials"]["secret_access_key"].GetString();
        const bool omit_token =
            context.HasMember("omit_session_token") && context["omit_session_token"].GetBool();
        if (context["credentials"].HasMember("token") && !omit_token)
            credentials.session_token = context["credentials"]["token"].GetString();
        SigV4Request request = parse_request(read(dir / "request.txt"));
        const auto signature = sigv4_sign(
            request, credentials, context["region"].GetString(), context["service"].GetString(),
            utc_seconds(context["timestamp"].GetString()), context["sign_body"].GetBool());
        CHECK(signature.canonical_request == trimmed(read(dir / "header-canonical-request.txt")));
        CHECK(signature.string_to_sign == trimmed(read(dir / "header-string-to-sign.txt")));
        CHECK(signature.signature == trimmed(read(dir / "header-signature.txt")));
        ++cases;
    }
    CHECK(cases == 31);
}

TEST_CASE("SigV4 for Bedrock: a model id with a colon is double-encoded in the canonical request") {
    SigV4Request request;
    request.method = "POST";
    request.path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse";
    request.headers = {{"Host", "bedrock-runtime.us-east-1.amazonaws.com"},
                       {"Content-Type", "application/json"}};
    const std::string body = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
    request.body = body;
    AwsCredentials credentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "tok"};
    const auto first = sigv4_sign(request, credentials, "us-east-1", "bedrock", 1700000000);
    CHECK(first.canonical_request.starts_with(
        "POST\n/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse\n\n"));
    CHECK(first.canonical_request.find("content-type;host;x-amz-date;x-amz-security-token") !=
          std::string::npos);
    CHECK(first.string_to_sign.find("20231114/us-east-1/bedrock/aws4_request") !=
          std::string::npos);
    // A resend is signed again: one date, one token, one Authorization, and a new signature.
    const auto again = sigv4_sign(request, credentials, "us-east-1", "bedrock", 1700000060);
    CHECK(again.signature != first.signature);
    std::size_t dates = 0, authorizations = 0;
    for (const auto& [name, value] : request.headers) {
        dates += nous::http::header_name_equals(name, "x-amz-date");
        authorizations += nous::http::header_name_equals(name, "authorization");
        CHECK(value.find(credentials.secret_access_key) == std::string::npos);
    }
    CHECK(dates == 1);
    CHECK(authorizations == 1);
}

TEST_CASE("SigV4 encodes by byte value: an application's Latin-1 locale changes no signature") {
    // In a Latin-1 locale isalnum(0xC3) is true ('Ã'): a locale-following
    // encoder would keep the first byte of UTF-8 'é' raw and sign a
    // canonical query AWS never computes. The locale is built for the test
    // (localedef, from Debian's `locales`, which `make deps` installs).
    const auto sign = [] {
        SigV4Request request;
        request.method = "GET";
        request.path = "/";
        request.query = "q=caf%C3%A9&Name=%C9t%E9";
        request.headers = {{"Host", "example.amazonaws.com"}};
        AwsCredentials credentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
        return sigv4_sign(request, credentials, "us-east-1", "service", 1700000000);
    };
    const auto in_c = sign();
    CHECK(in_c.canonical_request.find("\nName=%C9t%E9&q=caf%C3%A9\n") != std::string::npos);

    const auto dir =
        std::filesystem::temp_directory_path() / ("nous-locale-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string command =
        "localedef -i en_US -f ISO-8859-1 '" + (dir / "en_US.ISO-8859-1").string() + "' 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    ::setenv("LOCPATH", dir.c_str(), 1);
    REQUIRE(std::setlocale(LC_ALL, "en_US.ISO-8859-1") != nullptr);
    const bool latin1_letter = std::isalnum(0xC3) != 0;  // the trap is live
    const auto in_latin1 = sign();
    std::setlocale(LC_ALL, "C");
    ::unsetenv("LOCPATH");
    std::filesystem::remove_all(dir);

    CHECK(latin1_letter);
    CHECK(in_latin1.canonical_request == in_c.canonical_request);
    CHECK(in_latin1.signature == in_c.signature);
}

TEST_CASE("SigV4 for Bedrock gives botocore's signature for the same request") {
    // Signed by botocore 1.43's SigV4Auth ("bedrock", "us-east-1") at
    // 20261204T075702Z: the request as boto3's bedrock-runtime client sends it.
    SigV4Request request;
    request.method = "POST";
    request.path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse";
    request.headers = {{"Content-Type", "application/json"},
                       {"Host", "bedrock-runtime.us-east-1.amazonaws.com"}};
    const std::string body = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
    request.body = body;
    const auto s =
        sigv4_sign(request, {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "tok"},
                   "us-east-1", "bedrock", 1796371022);
    CHECK(s.authorization ==
          "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261204/us-east-1/bedrock/aws4_request, "
          "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, "
          "Signature=24355d091774b89bd24a29d6d55ee158224551f7392bad3599700b7d922d6fa4");
}
