#pragma once
// The mock's credential check (nous_mock internal): with --require-key, a
// model request whose credential is not the key gets the 401 its provider,
// or its platform, answers.

#include <string>

#include "nous/mock/mock_server.hpp"

namespace nous::http::mock {

/// A chat, embeddings or counting route (the ones a credential guards).
bool is_model_route(const std::string& method, const std::string& route);
/// Whether `request` carries `key`; if not, `refusal` holds the 401.
bool credential_accepted(const MockRequest& request, const std::string& route,
                         const std::string& key, MockResponse& refusal);
/// A Bedrock route's SigV4 signature recomputed with `secret`; when it does
/// not match (or is stale, or absent), `refusal` holds AWS's 403.
bool aws_signature_accepted(const MockRequest& request, const std::string& secret,
                            MockResponse& refusal);

}  // namespace nous::http::mock
