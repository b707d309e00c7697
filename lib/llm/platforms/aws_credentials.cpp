// AWS credentials from the environment or the shared credentials file (aws_credentials.hpp).

#include "platforms/aws_credentials.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>

#include "json/provider_json.hpp"
#include "nous/http/client.hpp"
#include "nous/http/json.hpp"

namespace nous::llm::detail {

namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

std::string trim(std::string s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string::npos) return {};
    const auto last = s.find_last_not_of(" \t\r");
    return s.substr(first, last - first + 1);
}

/// A profile's keys of an INI credentials file: `[profile]` then `key = value` lines.
std::optional<AwsCredentials> from_file(const std::string& path, const std::string& profile) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    AwsCredentials c;
    bool inside = false;
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line.front() == '[' && line.back() == ']') {
            inside = trim(line.substr(1, line.size() - 2)) == profile;
            continue;
        }
        if (!inside) continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
        if (key == "aws_access_key_id")
            c.access_key_id = value;
        else if (key == "aws_secret_access_key")
            c.secret_access_key = value;
        else if (key == "aws_session_token")
            c.session_token = value;
    }
    if (c.access_key_id.empty() || c.secret_access_key.empty()) return std::nullopt;
    return c;
}

using Clock = std::chrono::system_clock;

/// A metadata endpoint's call: no retry, a 1 s bound (a machine outside the
/// cloud must not wait on it).
nous::http::Options metadata_options() {
    nous::http::Options o;
    o.max_retries = 0;
    o.connect_timeout = nous::http::Milliseconds(1000);
    o.total_timeout = nous::http::Milliseconds(1000);
    return o;
}

/// {AccessKeyId, SecretAccessKey, Token, Expiration} as both endpoints answer.
std::optional<AwsCredentials> from_json(const std::string& body, Clock::time_point& expires) {
    auto doc = nous::http::parse_json(body);
    if (!doc || !doc.value()->IsObject()) return std::nullopt;
    const auto& root = *doc.value();
    AwsCredentials c{string_member(root, "AccessKeyId").value_or(""),
                     string_member(root, "SecretAccessKey").value_or(""),
                     string_member(root, "Token").value_or("")};
    if (c.access_key_id.empty() || c.secret_access_key.empty()) return std::nullopt;
    expires = Clock::now() + std::chrono::hours(1);
    if (auto when = string_member(root, "Expiration")) {
        std::tm tm{};
        if (strptime(when->c_str(), "%Y-%m-%dT%H:%M:%S", &tm))
            expires = Clock::from_time_t(timegm(&tm));
    }
    return c;
}

/// ECS/EKS: AWS_CONTAINER_CREDENTIALS_FULL_URI, or _RELATIVE_URI on
/// 169.254.170.2, with AWS_CONTAINER_AUTHORIZATION_TOKEN (or its _FILE).
std::optional<AwsCredentials> from_container(Clock::time_point& expires, std::string& why) {
    const std::string full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const std::string relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    if (full.empty() && relative.empty()) return std::nullopt;
    const std::string url = full.empty() ? "http://169.254.170.2" + relative : full;
    nous::http::Headers headers;
    std::string token = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    if (token.empty())
        if (std::string file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); !file.empty()) {
            std::ifstream in(file);
            std::getline(in, token);
        }
    if (!token.empty()) headers.emplace_back("Authorization", token);
    auto r = nous::http::request("GET", url, {}, headers, metadata_options());
    if (!r) {
        why = "the container credentials endpoint (" + r.error().message + ")";
        return std::nullopt;
    }
    return from_json(r->body, expires);
}

/// EC2's IMDSv2: a session token (PUT), the role's name, its credentials.
std::optional<AwsCredentials> from_imds(Clock::time_point& expires, std::string& why) {
    if (env("AWS_EC2_METADATA_DISABLED") == "true") return std::nullopt;
    std::string endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (endpoint.empty()) endpoint = "http://169.254.169.254";
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    const auto options = metadata_options();
    auto token = nous::http::request("PUT", endpoint + "/latest/api/token", {},
                                     {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}}, options);
    if (!token) {
        why = "EC2's instance metadata at " + endpoint + " (" + token.error().message + ")";
        return std::nullopt;
    }
    const nous::http::Headers with_token = {{"X-aws-ec2-metadata-token", token->body}};
    const std::string base = endpoint + "/latest/meta-data/iam/security-credentials/";
    auto roles = nous::http::request("GET", base, {}, with_token, options);
    if (!roles) {
        why = "EC2's instance metadata names no role (" + roles.error().message + ")";
        return std::nullopt;
    }
    const std::string role = roles->body.substr(0, roles->body.find('\n'));
    auto credentials = nous::http::request("GET", base + role, {}, with_token, options);
    if (!credentials) {
        why = "EC2's instance metadata (" + credentials.error().message + ")";
        return std::nullopt;
    }
    return from_json(credentials->body, expires);
}

struct Temporary {
    std::mutex mutex;    ///< held through a refresh: one thread asks, the others wait
    std::string source;  ///< where they came from: a changed source is asked again
    std::optional<AwsCredentials> credentials;
    Clock::time_point refresh_at{};
};

}  // namespace

std::optional<AwsCredentials> aws_credentials(std::string& tried) {
    AwsCredentials c{env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
                     env("AWS_SESSION_TOKEN")};
    if (!c.access_key_id.empty() && !c.secret_access_key.empty()) return c;
    std::string file = env("AWS_SHARED_CREDENTIALS_FILE");
    if (file.empty()) {
        const std::string home = env("HOME");
        file = (home.empty() ? std::string(".") : home) + "/.aws/credentials";
    }
    std::string profile = env("AWS_PROFILE");
    if (profile.empty()) profile = "default";
    if (auto from_profile = from_file(file, profile)) return from_profile;
    // Temporary credentials from the cloud, kept for the process and
    // refreshed 5 minutes before they expire.
    static Temporary temporary;
    const std::string source = env("AWS_CONTAINER_CREDENTIALS_FULL_URI") + "|" +
                               env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") + "|" +
                               env("AWS_EC2_METADATA_SERVICE_ENDPOINT") + "|" +
                               env("AWS_EC2_METADATA_DISABLED");
    std::lock_guard lock(temporary.mutex);
    if (temporary.credentials && temporary.source == source && Clock::now() < temporary.refresh_at)
        return temporary.credentials;
    std::string why;
    Clock::time_point expires{};
    auto fetched = from_container(expires, why);
    if (!fetched && why.empty()) fetched = from_imds(expires, why);
    if (fetched) {
        temporary.source = source;
        temporary.credentials = fetched;
        temporary.refresh_at = expires - std::chrono::minutes(5);
        return fetched;
    }
    temporary.credentials.reset();
    tried = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, profile '" + profile + "' of " + file +
            ", the container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI) or "
            "EC2's instance metadata" +
            (why.empty() ? std::string() : ": " + why + " refused or stayed silent past 1 s");
    return std::nullopt;
}

std::string aws_region(const std::string& requested) {
    if (!requested.empty()) return requested;
    if (std::string region = env("AWS_REGION"); !region.empty()) return region;
    return env("AWS_DEFAULT_REGION");
}

}  // namespace nous::llm::detail
