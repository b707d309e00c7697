#pragma once
// Google's application-default credentials for Vertex AI (nous_llm
// internal): an OAuth2 access token from a service account's key (a JWT
// signed RS256, exchanged at its token_uri) or a gcloud authorized_user file
// (its refresh token exchanged), kept by the whole process until 5 minutes
// before it expires; one thread refreshes while the others wait.
// docs/platforms.md.

#include <optional>
#include <string>

#include "nous/llm/provider.hpp"

namespace nous::llm::detail {

/// The key file of the chain: GOOGLE_APPLICATION_CREDENTIALS, else gcloud's
/// application_default_credentials.json; "" when neither exists.
std::string google_key_file();
/// The key file's project_id ("" when none).
std::string google_key_project(const std::string& key_file);
/// An access token for `key_file` (""; the GKE/GCE metadata server): the
/// cached one, or a new one from its token endpoint. An error names the
/// endpoint's words (never the key).
Result<std::string> google_access_token(const std::string& key_file);
/// Drops the cached token of `key_file` (the model endpoint answered 401).
void forget_google_token(const std::string& key_file);

}  // namespace nous::llm::detail
