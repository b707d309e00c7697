#pragma once
// Embeddings: texts in, one contiguous float32 matrix out, row i for input i.
// OpenAI `POST {base}/embeddings` (base64 by default, as the official SDKs
// ask) and Gemini `POST {base}/models/{model}:batchEmbedContents`; inputs
// split into batches, several in flight over the pool, each decoded straight
// into its rows. Library nous_llm; docs/embeddings.md.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/options.hpp"
#include "nous/llm/delta.hpp"
#include "nous/llm/provider.hpp"
#include "nous/llm/rate_limit.hpp"
#include "nous/llm/telemetry.hpp"

namespace nous::llm {

struct EmbedRequest {
    /// openai (and openai_responses: the same /embeddings endpoint) or gemini;
    /// anthropic has no embeddings API: invalid_argument.
    Provider provider = Provider::openai;
    std::string base_url;  ///< empty: default_base_url(provider)
    std::string api_key;   ///< empty: no credential header
    std::string model;     ///< required
    /// Azure: `api-version=V` on the query; empty: none.
    std::string api_version;
    /// One row each, in this order; none may be empty, and each is UTF-8 (the
    /// providers refuse either).
    std::vector<std::string> inputs;
    /// OpenAI `dimensions`, Gemini `outputDimensionality`; unset: the model's own.
    std::optional<int> dimensions;
    /// OpenAI: ask for `encoding_format: "float"` instead of "base64". Either
    /// answer is read, whichever the server sent.
    bool float_encoding = false;
    /// Inputs per request; unset: 2048 (OpenAI), 100 (Gemini).
    std::optional<std::size_t> batch_size;
    /// Requests in flight at once (at least 1).
    std::size_t concurrency = 4;
    /// Sent after the provider's headers; one with the same name replaces the provider's.
    Headers headers;
    /// Told of this call's start and its end or error (operation
    /// "embeddings"); nullptr: set_default_observer()'s, else none.
    std::shared_ptr<Observer> observer;
    /// As ChatRequest::trace_parent.
    std::string trace_parent;
};

/// One request of an embed() call: which inputs it held and what came back.
struct EmbeddingBatch {
    std::size_t first = 0;   ///< its first input's index
    std::size_t count = 0;   ///< inputs it held
    std::string request_id;  ///< the provider's id of the request, "" when none
    /// Input tokens the provider counted (OpenAI usage.prompt_tokens); nullopt when none.
    std::optional<std::int64_t> input_tokens;
};

struct Embeddings {
    std::size_t count = 0;       ///< rows: one per input
    std::size_t dimensions = 0;  ///< values per row
    /// count x dimensions, row after row: row i is input i's vector.
    std::vector<float> values;
    /// The requests in input order.
    std::vector<EmbeddingBatch> batches;
    /// Summed over the batches; nullopt when the provider reported none (Gemini).
    std::optional<Usage> usage;
    /// The rate limit the last response to arrive reported, if any.
    std::optional<RateLimit> rate_limit;

    std::span<const float> row(std::size_t i) const noexcept {
        return {values.data() + i * dimensions, dimensions};
    }
};

/// Embeds every input: batches of `batch_size` inputs (and, for OpenAI, of
/// about 300,000 tokens, estimated as bytes / 3), up to `concurrency` of them
/// in flight, each through the retry policy of `options`. A batch that fails
/// ends the call with its error, the message naming its inputs' range
/// ("inputs 2048-4095: ..."). A response whose count or dimensions do not
/// match the request, or with a value that is not a finite number, is `protocol`.
Result<Embeddings> embed(const EmbedRequest& request, const nous::http::Options& options = {});

/// One embeddings response body (OpenAI `/embeddings` or Gemini
/// `batchEmbedContents`) decoded: `count` rows of `dimensions` values (0:
/// whatever the first row has, the same for every row). The reader embed()
/// uses, for a caller with a transport of its own.
Result<Embeddings> parse_embedding_response(Provider provider, std::string_view body,
                                            std::size_t count, std::size_t dimensions = 0);

}  // namespace nous::llm
