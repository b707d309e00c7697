#pragma once
// The call's one matrix, which every batch's reader writes its rows into
// (nous_llm internal). Its width is the request's dimensions or, when the
// request named none, the first row's: the matrix is allocated once, then,
// by the batches in flight at once, written without a lock (each owns its
// rows). docs/embeddings.md, "Decoding".

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace nous::llm::detail {

class EmbeddingMatrix {
  public:
    /// Widest row taken from a server: no embedding model comes near it, and
    /// a hostile width would otherwise size the matrix.
    static constexpr std::size_t max_dimensions = 65536;

    /// `dimensions` 0: the first row decides.
    EmbeddingMatrix(std::size_t count, std::size_t dimensions);

    /// Row `index`, `dimensions` wide: nullptr (and `why`) when that is not
    /// the matrix's width, or a first width the matrix cannot take.
    float* row(std::size_t index, std::size_t dimensions, std::string& why);
    std::size_t dimensions() const noexcept { return width_.load(std::memory_order_acquire); }
    std::size_t count() const noexcept { return count_; }
    /// The values, row after row (the matrix is empty after).
    std::vector<float> take() noexcept { return std::move(values_); }

  private:
    bool allocate(std::size_t dimensions, std::string& why);
    const std::size_t count_;
    std::atomic<std::size_t> width_{0};
    std::mutex allocating_;
    std::vector<float> values_;
};

/// What one response's reader needs and gives: the rows of inputs
/// [first, first + count) in the matrix, and the usage the response reported.
struct BatchReading {
    EmbeddingMatrix& matrix;
    std::size_t first = 0;
    std::size_t count = 0;
    std::optional<std::int64_t> input_tokens;
    /// A row whose place is not known yet (its index after it), or the call's
    /// first float row (its width not known yet): reused row after row.
    std::vector<float> scratch;
    /// Which of the batch's rows arrived (a repeated index is an error).
    std::vector<bool> seen;
    /// The row the item being read claimed last (a reader that must read the item again frees it).
    std::optional<std::size_t> claimed;
};

}  // namespace nous::llm::detail
