#pragma once
// A base64 embedding (nous_llm internal): a string of little-endian
// float32, decoded in one pass straight into the row it belongs to, 32
// characters at a time where the CPU has AVX2. docs/embeddings.md, "Decoding".

#include <cstddef>
#include <string>
#include <string_view>

namespace nous::llm::detail {

/// The float32 values a base64 string (padded or not) holds; false when its
/// length is no whole number of them.
bool base64_float_count(std::string_view text, std::size_t& count) noexcept;
/// Decodes `text` (base64 of little-endian float32) into `out`, which holds
/// base64_float_count() values; false on a byte outside the alphabet or a
/// value that is not finite.
/// Where the CPU has AVX2, 32 characters are decoded at a time.
bool decode_base64_floats(std::string_view text, float* out) noexcept;
/// The same, a quad at a time on every CPU (what the AVX2 path is tested against).
bool decode_base64_floats_portable(std::string_view text, float* out) noexcept;
/// A base64 string's JSON escapes (`\/`, `\u00XX`) undone into `out`; false
/// for an escape no base64 text can hold.
bool unescape_base64(std::string_view raw, std::string& out);

}  // namespace nous::llm::detail
