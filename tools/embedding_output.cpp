// nouscli embed's output formats (embedding_output.hpp).

#include "embedding_output.hpp"

#include <bit>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

namespace nouscli {

namespace {

bool put(std::FILE* out, std::string_view data) {
    return data.empty() || std::fwrite(data.data(), 1, data.size(), out) == data.size();
}

/// Row after row, little-endian whatever the machine.
bool put_values(std::FILE* out, const std::vector<float>& values) {
    if constexpr (std::endian::native == std::endian::little)
        return put(out, std::string_view(reinterpret_cast<const char*>(values.data()),
                                         values.size() * sizeof(float)));
    std::string bytes;
    bytes.reserve(values.size() * sizeof(float));
    for (float v : values) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
        for (int shift = 0; shift < 32; shift += 8) bytes += static_cast<char>(u >> shift);
    }
    return put(out, bytes);
}

bool put_jsonl(std::FILE* out, const nous::llm::Embeddings& e) {
    std::string line;
    char number[32];
    for (std::size_t i = 0; i < e.count; ++i) {
        line = "{\"index\":" + std::to_string(i) + ",\"embedding\":[";
        const auto row = e.row(i);
        for (std::size_t j = 0; j < row.size(); ++j) {
            if (j) line += ',';
            // The shortest text that reads back as the same float32.
            auto [end, ec] = std::to_chars(number, number + sizeof number, row[j]);
            line.append(number, end);
        }
        line += "]}\n";
        if (!put(out, line)) return false;
    }
    return true;
}

/// NumPy format 1.0: magic, version, a little-endian header length, and a
/// Python dict literal padded with spaces to a 64-byte boundary, ending "\n".
bool put_npy(std::FILE* out, const nous::llm::Embeddings& e) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(e.count) + ", " + std::to_string(e.dimensions) + "), }";
    const std::size_t preamble = 10;  // magic (6), version (2), header length (2)
    std::size_t total = preamble + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict += '\n';
    const auto length = static_cast<std::uint16_t>(dict.size());
    std::string head = "\x93NUMPY";
    head += '\x01';
    head += '\x00';
    head += static_cast<char>(length & 0xff);
    head += static_cast<char>(length >> 8);
    return put(out, head) && put(out, dict) && put_values(out, e.values);
}

}  // namespace

std::optional<EmbeddingOutput> embedding_output_named(std::string_view name) {
    if (name == "jsonl") return EmbeddingOutput::jsonl;
    if (name == "f32") return EmbeddingOutput::f32;
    if (name == "npy") return EmbeddingOutput::npy;
    return std::nullopt;
}

bool write_embeddings(std::FILE* out, const nous::llm::Embeddings& embeddings,
                      EmbeddingOutput format) {
    bool written = false;
    switch (format) {
        case EmbeddingOutput::jsonl:
            written = put_jsonl(out, embeddings);
            break;
        case EmbeddingOutput::f32:
            written = put_values(out, embeddings.values);
            break;
        case EmbeddingOutput::npy:
            written = put_npy(out, embeddings);
            break;
    }
    return written && std::fflush(out) == 0;
}

}  // namespace nouscli
