// libFuzzer: the embeddings response readers (nous/llm/embed.hpp,
// parse_embedding_response) on any bytes, for both formats: no crash, leak
// or UB; a matrix only of the count and width asked, every value finite;
// the same verdict and matrix when the body arrives in pieces (of a size
// the input picks) as when it is read whole; and, where RapidJSON reads the
// same body as a document, the values it holds (floats nearest the
// decimal: within one float's rounding of the document's double).
//   byte 0: the format (even OpenAI, odd Gemini); byte 1: rows (0-7);
//   byte 2: the width asked (0: any, else 1-8); the rest: the body.

#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "llm/embeddings/body_reader.hpp"
#include "llm/embeddings/embedding_format.hpp"
#include "nous/llm/embed.hpp"

namespace {

/// The vector a DOM item holds, when it is a float array (base64 items are not compared).
const rapidjson::Value* float_values(const rapidjson::Value& item, bool gemini) {
    if (!item.IsObject()) return nullptr;
    auto m = item.FindMember(gemini ? "values" : "embedding");
    return m != item.MemberEnd() && m->value.IsArray() ? &m->value : nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const bool gemini = data[0] & 1;
    const std::size_t count = data[1] % 8, width = data[2] % 9;
    const std::string_view body(reinterpret_cast<const char*>(data) + 3, size - 3);
    using nous::llm::Provider;
    auto e = nous::llm::parse_embedding_response(gemini ? Provider::gemini : Provider::openai, body,
                                                 count, width);
    {
        // The same body in pieces of 1-32 bytes (byte 0's upper bits).
        namespace detail = nous::llm::detail;
        const std::size_t piece = (data[0] >> 3) + 1;
        detail::EmbeddingMatrix matrix(count, width);
        detail::BatchReading batch{matrix, 0, count, std::nullopt, {}, {}, {}};
        detail::EmbeddingBodyReader reader(
            gemini ? detail::gemini_embedding_format() : detail::openai_embedding_format(), batch,
            body.size() + 1);
        std::optional<std::string> bad;
        for (std::size_t at = 0; at < body.size() && !bad; at += piece)
            bad = reader.feed(body.substr(at, piece));
        if (!bad) bad = reader.finish();
        if (bad.has_value() == static_cast<bool>(e)) std::abort();
        if (e && matrix.take() != e->values) std::abort();
    }
    if (!e) return 0;
    if (e->count != count || e->values.size() != count * e->dimensions) std::abort();
    if (width != 0 && count != 0 && e->dimensions != width) std::abort();
    for (float v : e->values)
        if (!std::isfinite(v)) std::abort();
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());  // (its full-precision mode has UB on 0e-50)
    if (doc.HasParseError() || !doc.IsObject()) return 0;  // e.g. a lone surrogate escape
    auto list = doc.FindMember(gemini ? "embeddings" : "data");
    if (list == doc.MemberEnd() || !list->value.IsArray() || list->value.Size() != count)
        std::abort();
    for (rapidjson::SizeType i = 0; i < list->value.Size(); ++i) {
        const rapidjson::Value& item = list->value[i];
        std::size_t row = i;
        if (!gemini && item.HasMember("index") && item["index"].IsUint64())
            row = static_cast<std::size_t>(item["index"].GetUint64());
        const rapidjson::Value* values = float_values(item, gemini);
        if (!values) continue;
        if (values->Size() != e->dimensions) std::abort();
        for (rapidjson::SizeType j = 0; j < values->Size(); ++j) {
            const double want = (*values)[j].GetDouble();
            const double got = e->row(row)[j];
            if (std::fabs(got - want) > 1e-6 * std::fabs(want) + 1e-38) std::abort();
        }
    }
    return 0;
}
