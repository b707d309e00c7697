// Gemini's batch embeddings: POST {base}/models/{model}:batchEmbedContents
// {"requests":[{"model":"models/M","content":{"parts":[{"text"}]},
// "outputDimensionality"?}]} -> {"embeddings":[{"values":[...]}]}, one per
// request, in order. Gemini sends floats only, and no usage.

#include "embeddings/embedding_format.hpp"

namespace nous::llm::detail {

namespace {

void write_string(Writer& w, std::string_view text) {
    w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

class GeminiEmbeddings final : public EmbeddingFormat {
  public:
    std::string url(const EmbedRequest& request, const std::string& base) const override {
        return base + "/models/" + request.model + ":batchEmbedContents";
    }
    void write_body(Writer& w, const EmbedRequest& request, std::size_t first,
                    std::size_t count) const override {
        const std::string model = "models/" + request.model;
        w.StartObject();
        w.Key("requests");
        w.StartArray();
        for (std::size_t i = first; i < first + count; ++i) {
            w.StartObject();
            w.Key("model");
            write_string(w, model);
            w.Key("content");
            w.StartObject();
            w.Key("parts");
            w.StartArray();
            w.StartObject();
            w.Key("text");
            write_string(w, request.inputs[i]);
            w.EndObject();
            w.EndArray();
            w.EndObject();
            if (request.dimensions) {
                w.Key("outputDimensionality");
                w.Int(*request.dimensions);
            }
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    /// The API's limit: 100 requests per batch.
    std::size_t default_batch_size() const noexcept override { return 100; }
    /// batchEmbedContents takes at most 100 requests.
    std::optional<std::string> refusal(const EmbedRequest& request) const override {
        return batch_over(request, default_batch_size(), "gemini");
    }

    const char* list_key() const noexcept override { return "embeddings"; }
    std::optional<std::string> read_item(JsonCursor& cursor, BatchReading& batch,
                                         std::size_t position) const override {
        std::optional<std::string> bad;
        bool has_values = false;
        const bool item = cursor.object([&](std::string_view item_key) {
            if (item_key != "values") return cursor.skip_value();
            if (has_values) {
                bad = "an embedding with two \"values\"";
                return false;
            }
            has_values = true;
            bad = read_float_row(cursor, batch, position);
            return !bad;
        });
        if (bad) return bad;
        if (!item) return "an embeddings item that is not a JSON object of the expected shape";
        if (!has_values) return "an embedding without \"values\"";
        return std::nullopt;
    }
};

}  // namespace

const EmbeddingFormat& gemini_embedding_format() noexcept {
    static const GeminiEmbeddings format;
    return format;
}

}  // namespace nous::llm::detail
