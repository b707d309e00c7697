#pragma once
// How the mock reads a chat request: which provider a route is (OpenAI chat
// completions, Anthropic Messages, Gemini generateContent), and which reply
// a request asks for (model, streamed or not, a tool call, usage).

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

#include "faults.hpp"
#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

struct ChatRoute {
    Format format = Format::openai;
    std::string path_model;      ///< Gemini names the model in the path
    bool stream_by_url = false;  ///< Gemini streams by URL (:streamGenerateContent), not by body
};

/// `text` with its %XX escapes undone.
std::string percent_decoded(std::string_view text);
/// D of an Azure route /openai/deployments/D`operation`, or nothing.
std::optional<std::string> azure_deployment(const std::string& route, std::string_view operation);

/// The chat route of a request line (and Azure's: /openai/v1/chat/completions,
/// /openai/v1/responses, /openai/deployments/D/chat/completions): POST /v1/chat/completions,
/// /v1/messages, /v1beta/models/M:generateContent or :streamGenerateContent.
std::optional<ChatRoute> chat_route(const std::string& method, const std::string& path);

/// Parses a request's body into `doc` as a provider reads it: nullptr when
/// it is a JSON object of UTF-8 text whose numbers are all finite, else why
/// it is refused. Iterative: a deeply nested body cannot exhaust the
/// connection thread's stack.
const char* request_body_problem(const MockRequest& request, rapidjson::Document& doc);

/// A request's body as a JSON object; false (and `error`, a 400 in
/// OpenAI's error shape) for anything else.
bool read_json_object(const MockRequest& request, rapidjson::Document& doc, MockResponse& error);

/// Reads a chat request into `reply` and whether to stream it; false (and
/// `error`, a 400 in OpenAI's error shape) for a body that is not a JSON object.
bool read_chat(const ChatRoute& route, const MockRequest& request, const MockServerOptions& options,
               Fault fault, bool& stream, Reply& reply, MockResponse& error);

}  // namespace nous::http::mock
