// What every embeddings reader does with one vector (claim its row, read a
// float array into it) and with a whole body (embedding_format.hpp).

#include <cstring>

#include "embeddings/body_reader.hpp"
#include "embeddings/embedding_format.hpp"

namespace nous::llm::detail {

std::optional<std::string> EmbeddingFormat::read(std::string_view body, BatchReading& batch) const {
    EmbeddingBodyReader reader(*this, batch, body.size());
    if (auto bad = reader.feed(body)) return bad;
    return reader.finish();
}

std::optional<std::string> claim_row(BatchReading& batch, std::size_t index) {
    if (index >= batch.count)
        return "an embedding with index " + std::to_string(index) + " in a batch of " +
               std::to_string(batch.count);
    if (batch.seen.size() != batch.count) batch.seen.assign(batch.count, false);
    if (batch.seen[index]) return "two embeddings with index " + std::to_string(index);
    batch.seen[index] = true;
    batch.claimed = index;
    return std::nullopt;
}

std::optional<std::string> read_float_row(JsonCursor& cursor, BatchReading& batch,
                                          std::size_t index) {
    if (auto bad = claim_row(batch, index)) return bad;
    std::string why;
    if (const std::size_t width = batch.matrix.dimensions()) {
        float* row = batch.matrix.row(batch.first + index, width, why);
        if (!row) return why;
        std::size_t got = 0;
        if (!cursor.floats(row, width, got))
            return "embedding " + std::to_string(index) +
                   ": not an array of finite JSON numbers, or more than " + std::to_string(width) +
                   " of them";
        if (got != width)
            return "an embedding of " + std::to_string(got) + " values where the others have " +
                   std::to_string(width);
        return std::nullopt;
    }
    // The call's first row: its width is whatever it holds.
    if (!cursor.floats(batch.scratch))
        return "embedding " + std::to_string(index) + ": not an array of finite JSON numbers";
    float* row = batch.matrix.row(batch.first + index, batch.scratch.size(), why);
    if (!row) return why;
    std::memcpy(row, batch.scratch.data(), batch.scratch.size() * sizeof(float));
    return std::nullopt;
}

}  // namespace nous::llm::detail
