#pragma once
// AWS credentials for SigV4 (nous_llm internal), from the places a server
// finds them: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), else a profile (AWS_PROFILE, default "default") of
// the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default
// ~/.aws/credentials). docs/platforms.md.

#include <optional>
#include <string>

#include "nous/llm/aws_sigv4.hpp"

namespace nous::llm::detail {

using nous::llm::AwsCredentials;

/// The first credentials found, or nothing (`tried` then names where it looked).
std::optional<AwsCredentials> aws_credentials(std::string& tried);

/// The region: `requested`, else AWS_REGION, else AWS_DEFAULT_REGION; "" for none.
std::string aws_region(const std::string& requested);

}  // namespace nous::llm::detail
