// AWS credentials from the environment or the shared credentials file (aws_credentials.hpp).

#include "platforms/aws_credentials.hpp"

#include <cstdlib>
#include <fstream>

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
    tried = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or profile '" + profile + "' of " + file;
    return std::nullopt;
}

std::string aws_region(const std::string& requested) {
    if (!requested.empty()) return requested;
    if (std::string region = env("AWS_REGION"); !region.empty()) return region;
    return env("AWS_DEFAULT_REGION");
}

}  // namespace nous::llm::detail
