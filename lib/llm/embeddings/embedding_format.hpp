#pragma once
// One provider's embeddings endpoint as one unit (nous_llm internal), as
// WireFormat is for chat: its URL, its request body for a range of inputs,
// its batch limits, and its response's reader, which writes each vector
// straight into the call's matrix. WireFormat::embeddings() gives a
// provider's (nullptr: it has none). docs/embeddings.md.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "embeddings/embedding_matrix.hpp"
#include "embeddings/vector_json.hpp"
#include "formats/wire_format.hpp"
#include "nous/llm/embed.hpp"

namespace nous::llm::detail {

class EmbeddingFormat {
  public:
    virtual ~EmbeddingFormat() = default;
    /// The endpoint under `base` (no trailing slash).
    virtual std::string url(const EmbedRequest& request, const std::string& base) const = 0;
    /// The body asking for inputs [first, first + count).
    virtual void write_body(Writer& w, const EmbedRequest& request, std::size_t first,
                            std::size_t count) const = 0;
    /// Inputs per request when the caller sets none.
    virtual std::size_t default_batch_size() const noexcept = 0;
    /// Estimated tokens (bytes / 3) per request, at most; 0: no such limit.
    virtual std::size_t token_budget() const noexcept { return 0; }
    /// A 2xx body into `batch`'s rows: what is wrong with it, or nullopt.
    virtual std::optional<std::string> read(std::string_view body, BatchReading& batch) const = 0;
};

const EmbeddingFormat& openai_embedding_format() noexcept;
const EmbeddingFormat& gemini_embedding_format() noexcept;

/// Reads one vector, a float array at `cursor`, into row `index` of the
/// batch (index within the batch): straight into the row once the matrix's
/// width is known, else through the batch's scratch. The formats share it.
std::optional<std::string> read_float_row(JsonCursor& cursor, BatchReading& batch,
                                          std::size_t index);
/// What is wrong with a response once its reader is through, or nullopt:
/// its reader's own finding `bad`, then text that is not one JSON document
/// of the expected shape, the list (`list`, "data" or "embeddings") missing,
/// or a count of items that is not the batch's.
std::optional<std::string> response_verdict(std::optional<std::string> bad, bool shaped,
                                            JsonCursor& cursor, const char* list, bool has_list,
                                            std::size_t items, const BatchReading& batch);
/// Marks row `index` of the batch as read: an error for one out of range or read twice.
std::optional<std::string> claim_row(BatchReading& batch, std::size_t index);

}  // namespace nous::llm::detail
