#pragma once
// The mock's Google token endpoint and bearer check (nous_mock internal), as
// Vertex AI's callers meet them: POST /token takes a service account's JWT
// (grant_type jwt-bearer) or a refresh token, and issues an access token;
// Vertex's routes then take only a bearer it issued. With a key file
// (--google-key-file), the JWT's RS256 signature is verified with that key,
// its iss and aud checked, its exp not past; without one, any assertion and
// any bearer pass.

#include <mutex>
#include <set>
#include <string>

#include "nous/mock/mock_server.hpp"

namespace nous::http::mock {

class GoogleTokens {
  public:
    /// `key_file`: a service account file whose key verifies assertions ("": none).
    explicit GoogleTokens(const std::string& key_file);
    /// POST /token: the token, or the endpoint's 400/401 in Google's words.
    void answer(const MockRequest& request, MockResponse& response);
    /// A Vertex route's bearer: one this endpoint issued (any, without a key
    /// file); when not, `refusal` holds Google's 401.
    bool accepts(const MockRequest& request, MockResponse& refusal);

  private:
    std::string key_pem_, client_email_, token_uri_;
    bool checking_ = false;
    std::mutex mutex_;
    std::set<std::string> issued_;
    unsigned long next_ = 0;
};

/// A form value with its %XX and '+' undone.
std::string percent_decoded_form(const std::string& text);

/// A Vertex AI route: /v1/projects/P/locations/L/publishers/...
bool is_vertex_route(const std::string& route);

}  // namespace nous::http::mock
