// The call's one matrix (embedding_matrix.hpp).

#include "embeddings/embedding_matrix.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace nous::llm::detail {

namespace {

/// A matrix of megabytes is first touched a 4 KiB page at a time: a page
/// fault each (about a quarter of a large base64 call's time here). Asked
/// before the first touch, the kernel backs the whole 2 MiB stretches with
/// huge pages where transparent huge pages are on "madvise" (Debian's
/// default); elsewhere the advice changes nothing.
void ask_for_huge_pages(void* data, std::size_t bytes) noexcept {
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

EmbeddingMatrix::EmbeddingMatrix(std::size_t count, std::size_t dimensions) : count_(count) {
    std::string why;
    if (dimensions != 0) allocate(dimensions, why);  // the request's width, checked by embed()
}

bool EmbeddingMatrix::allocate(std::size_t dimensions, std::string& why) {
    if (dimensions == 0 || dimensions > max_dimensions) {
        why = "an embedding of " + std::to_string(dimensions) + " values (at most " +
              std::to_string(max_dimensions) + " are taken)";
        return false;
    }
    try {
        values_.reserve(count_ * dimensions);
        ask_for_huge_pages(values_.data(), values_.capacity() * sizeof(float));
        values_.assign(count_ * dimensions, 0.0f);
    } catch (const std::bad_alloc&) {
        why = "no memory for " + std::to_string(count_) + " x " + std::to_string(dimensions) +
              " values";
        return false;
    }
    width_.store(dimensions, std::memory_order_release);
    return true;
}

float* EmbeddingMatrix::row(std::size_t index, std::size_t dimensions, std::string& why) {
    std::size_t width = width_.load(std::memory_order_acquire);
    if (width == 0) {
        // The first row of a call that named no width: allocated once, under
        // the lock; every later row sees the width and needs none.
        std::lock_guard lock(allocating_);
        width = width_.load(std::memory_order_acquire);
        if (width == 0) {
            if (!allocate(dimensions, why)) return nullptr;
            width = dimensions;
        }
    }
    if (dimensions != width) {
        why = "an embedding of " + std::to_string(dimensions) + " values where the others have " +
              std::to_string(width);
        return nullptr;
    }
    if (index >= count_) {
        why = "an embedding for input " + std::to_string(index) + " of " + std::to_string(count_);
        return nullptr;
    }
    return values_.data() + index * width;
}

}  // namespace nous::llm::detail
