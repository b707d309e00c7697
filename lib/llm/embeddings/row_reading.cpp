// What every embeddings reader does with one vector (claim its row, read a
// float array into it) and with the whole response (its verdict)
// (embedding_format.hpp).

#include <cstring>

#include "embeddings/embedding_format.hpp"

namespace nous::llm::detail {

std::optional<std::string> response_verdict(std::optional<std::string> bad, bool shaped,
                                            JsonCursor& cursor, const char* list, bool has_list,
                                            std::size_t items, const BatchReading& batch) {
    if (bad) return bad;
    if (!shaped || !cursor.at_end()) return "an embeddings response that is not JSON";
    if (!has_list) return std::string("an embeddings response without \"") + list + "\"";
    if (items != batch.count)
        return std::to_string(items) + " embeddings for " + std::to_string(batch.count) + " inputs";
    return std::nullopt;
}

std::optional<std::string> claim_row(BatchReading& batch, std::size_t index) {
    if (index >= batch.count)
        return "an embedding with index " + std::to_string(index) + " in a batch of " +
               std::to_string(batch.count);
    if (batch.seen.size() != batch.count) batch.seen.assign(batch.count, false);
    if (batch.seen[index]) return "two embeddings with index " + std::to_string(index);
    batch.seen[index] = true;
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
