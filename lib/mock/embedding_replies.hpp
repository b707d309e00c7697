#pragma once
// The mock's embeddings: OpenAI `POST /v1/embeddings` and Gemini
// `POST /v1beta/models/M:batchEmbedContents`. Each text's vector is a unit
// vector derived from the text alone (the same text, the same vector, in
// every run and on every machine), as wide as asked (default 1536), sent as
// base64 of little-endian float32 or as floats, as asked. docs/llm.md
// "Testing against the mock".

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

struct EmbeddingRoute {
    Format format = Format::openai;  ///< openai or gemini
    std::string path_model;          ///< Gemini names the model in the path
};

/// POST /v1/embeddings, or /v1beta/models/M:batchEmbedContents.
std::optional<EmbeddingRoute> embedding_route(const std::string& method, const std::string& path);

/// The reply to an embeddings request: true with its JSON `body` and the
/// `input_tokens` it counted; false with `error` (a 400 in the provider's
/// shape) for a request the provider would refuse.
bool embedding_reply(const EmbeddingRoute& route, const MockRequest& request, std::string& body,
                     std::int64_t& input_tokens, MockResponse& error);

/// `text`'s vector: `dimensions` float32 values of length 1.
void mock_embedding(std::string_view text, std::size_t dimensions, float* out);

}  // namespace nous::http::mock
