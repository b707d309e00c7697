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
    /// What in `request` the provider answers with a 400 that the shared
    /// checks do not catch (a batch past its limit, a field its model does
    /// not take), said for invalid_argument; nullopt: nothing.
    virtual std::optional<std::string> refusal(const EmbedRequest& request) const {
        (void)request;
        return std::nullopt;
    }
    /// Estimated tokens (bytes / 3) per request, at most; 0: no such limit.
    virtual std::size_t token_budget() const noexcept { return 0; }
    /// The member of the response's object that lists the embeddings ("data", "embeddings").
    virtual const char* list_key() const noexcept = 0;
    /// One whole item of that list, the `position`th, into its row: what is wrong, or nullopt.
    virtual std::optional<std::string> read_item(JsonCursor& cursor, BatchReading& batch,
                                                 std::size_t position) const = 0;
    /// Any other member's whole value (skipped unless the format wants it); false: malformed.
    virtual bool read_member(std::string_view key, JsonCursor& cursor, BatchReading& batch) const {
        (void)key;
        (void)batch;
        return cursor.skip_value();
    }

    /// A whole 2xx body into `batch`'s rows: what is wrong with it, or nullopt.
    std::optional<std::string> read(std::string_view body, BatchReading& batch) const;
};

/// "batch_size 101 is over gemini's 100 inputs a request" when the
/// request's batch_size is over `most`; nullopt otherwise.
inline std::optional<std::string> batch_over(const EmbedRequest& request, std::size_t most,
                                             std::string_view provider) {
    if (!request.batch_size || *request.batch_size <= most) return std::nullopt;
    return "batch_size " + std::to_string(*request.batch_size) + " is over " +
           std::string(provider) + "'s " + std::to_string(most) + " inputs a request";
}

const EmbeddingFormat& openai_embedding_format() noexcept;
const EmbeddingFormat& gemini_embedding_format() noexcept;

/// Reads one vector, a float array at `cursor`, into row `index` of the
/// batch (index within the batch): straight into the row once the matrix's
/// width is known, else through the batch's scratch. The formats share it.
std::optional<std::string> read_float_row(JsonCursor& cursor, BatchReading& batch,
                                          std::size_t index);
/// Marks row `index` of the batch as read: an error for one out of range or read twice.
std::optional<std::string> claim_row(BatchReading& batch, std::size_t index);

}  // namespace nous::llm::detail
