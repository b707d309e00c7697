#pragma once
// nouscli embed's output formats: JSON lines, raw float32, and NumPy's .npy
// (format 1.0, dtype '<f4', shape (count, dims)), which numpy.load reads.

#include <cstdio>
#include <optional>
#include <string_view>

#include "nous/llm/embed.hpp"

namespace nouscli {

enum class EmbeddingOutput { jsonl, f32, npy };

/// "jsonl", "f32", "npy"; nullopt for anything else.
std::optional<EmbeddingOutput> embedding_output_named(std::string_view name);

/// The matrix to `out` in `format`; false when a write failed.
bool write_embeddings(std::FILE* out, const nous::llm::Embeddings& embeddings,
                      EmbeddingOutput format);

}  // namespace nouscli
