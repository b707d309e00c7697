#pragma once
// The mock's token counters (nous_mock internal): Anthropic
// messages/count_tokens, Responses responses/input_tokens and Gemini
// countTokens, each answering the count the same request's usage reports
// (input_tokens_of), in the provider's shape.

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>

#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

/// The input tokens the mock reports for a request: a quarter of the bytes
/// of the conversation's strings (its messages, system prompt, tools), at
/// least 1. The same for a chat request and for its count, whatever else
/// either body holds.
std::int64_t input_tokens_of(const rapidjson::Value& doc);

/// The format of a token-counting route; nullopt for any other.
std::optional<Format> count_route(const std::string& method, const std::string& path);

/// The answer to a count request into `response` (a 400 for a body that is
/// not a JSON object).
void count_reply(Format format, const MockRequest& request, MockResponse& response);

}  // namespace nous::http::mock
