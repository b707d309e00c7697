// OpenAI's embeddings endpoint, and the servers that speak it:
// POST {base}/embeddings {"model","input":[...],"encoding_format","dimensions"?}
// -> {"data":[{"index","embedding"}],"usage":{"prompt_tokens"}}. Each
// `embedding` is read as whichever the server sent: a base64 string of
// little-endian float32 (asked for by default, as the official SDKs do), or
// a float array (encoding_format "float", or a server that ignores it).
// Rows are placed by `index`, not by position.

#include <cstring>

#include "embeddings/base64_floats.hpp"
#include "embeddings/embedding_format.hpp"

namespace nous::llm::detail {

namespace {

/// One `data` item. Its vector goes straight into its row when `index` came
/// first (as OpenAI writes it), else into the scratch until the index is known.
class ItemReader {
  public:
    ItemReader(BatchReading& batch, std::size_t position) : batch_(batch), position_(position) {}

    std::optional<std::string> read(JsonCursor& cursor) {
        std::optional<std::string> bad;
        const bool shaped = cursor.object([&](std::string_view key) {
            if (key == "index") {
                if (index_) {
                    bad = "an item with two indexes";
                    return false;
                }
                std::int64_t index = -1;
                if (!cursor.integer(index) || index < 0) {
                    bad = "an embedding whose index is not a number of 0 or more";
                    return false;
                }
                index_ = static_cast<std::size_t>(index);
                return true;
            }
            if (key != "embedding") return cursor.skip_value();
            if (has_vector_) {
                bad = "an item with two embeddings";
                return false;
            }
            has_vector_ = true;
            bad = cursor.peek() == '"' ? base64_vector(cursor) : float_vector(cursor);
            return !bad;
        });
        if (bad) return bad;
        if (!shaped) return "an embeddings item that is not a JSON object of the expected shape";
        if (!has_vector_) return "an item without an embedding";
        if (!pending_) return std::nullopt;
        // The vector came before its index (or there was none: its position).
        const std::size_t index = index_.value_or(position_);
        if (auto taken = claim_row(batch_, index)) return taken;
        std::string why;
        float* row = batch_.matrix.row(batch_.first + index, batch_.scratch.size(), why);
        if (!row) return why;
        std::memcpy(row, batch_.scratch.data(), batch_.scratch.size() * sizeof(float));
        return std::nullopt;
    }

  private:
    std::optional<std::string> base64_vector(JsonCursor& cursor) {
        std::string_view text;
        bool escaped = false;
        if (!cursor.string(text, escaped)) return "an embedding string that does not end";
        std::string unescaped;  // only a server that escapes '/' as "\/" pays for it
        if (escaped) {
            if (!unescape_base64(text, unescaped)) return "an embedding string that is not base64";
            text = unescaped;
        }
        std::size_t count = 0;
        if (!base64_float_count(text, count))
            return "a base64 embedding that is no whole number of float32 values";
        if (count == 0) return "an embedding of 0 values";  // as a float array's [] is named
        float* row = nullptr;
        if (index_) {
            if (auto taken = claim_row(batch_, *index_)) return taken;
            std::string why;
            row = batch_.matrix.row(batch_.first + *index_, count, why);
            if (!row) return why;
        } else {
            batch_.scratch.resize(count);
            row = batch_.scratch.data();
            pending_ = true;
        }
        if (!decode_base64_floats(text, row))
            return "a base64 embedding with a byte outside base64 or a value that is not finite";
        return std::nullopt;
    }

    std::optional<std::string> float_vector(JsonCursor& cursor) {
        if (index_) return read_float_row(cursor, batch_, *index_);
        if (!cursor.floats(batch_.scratch))
            return "an embedding that is not an array of finite JSON numbers";
        pending_ = true;
        return std::nullopt;
    }

    BatchReading& batch_;
    const std::size_t position_;
    std::optional<std::size_t> index_;
    bool has_vector_ = false;
    bool pending_ = false;
};

class OpenAIEmbeddings final : public EmbeddingFormat {
  public:
    std::string url(const EmbedRequest&, const std::string& base) const override {
        return base + "/embeddings";
    }
    void write_body(Writer& w, const EmbedRequest& request, std::size_t first,
                    std::size_t count) const override {
        w.StartObject();
        w.Key("model");
        w.String(request.model.data(), static_cast<rapidjson::SizeType>(request.model.size()));
        w.Key("input");
        w.StartArray();
        for (std::size_t i = first; i < first + count; ++i)
            w.String(request.inputs[i].data(),
                     static_cast<rapidjson::SizeType>(request.inputs[i].size()));
        w.EndArray();
        w.Key("encoding_format");
        w.String(request.float_encoding ? "float" : "base64");
        if (request.dimensions) {
            w.Key("dimensions");
            w.Int(*request.dimensions);
        }
        w.EndObject();
    }
    std::size_t default_batch_size() const noexcept override { return 2048; }
    /// OpenAI's older model has one size ("This model does not support
    /// specifying dimensions"). A batch past 2048 is left to the server: the
    /// servers that speak this format (vLLM, Ollama) take more.
    std::optional<std::string> refusal(const EmbedRequest& request) const override {
        if (request.dimensions && request.model == "text-embedding-ada-002")
            return "dimensions is not taken by text-embedding-ada-002 (text-embedding-3 models "
                   "and later take it)";
        return std::nullopt;
    }
    /// OpenAI's limit is 300,000 tokens a request.
    std::size_t token_budget() const noexcept override { return 300'000; }

    const char* list_key() const noexcept override { return "data"; }
    std::optional<std::string> read_item(JsonCursor& cursor, BatchReading& batch,
                                         std::size_t position) const override {
        return ItemReader(batch, position).read(cursor);
    }
    bool read_member(std::string_view key, JsonCursor& cursor, BatchReading& batch) const override {
        if (key != "usage") return cursor.skip_value();
        return cursor.object([&](std::string_view usage_key) {
            if (usage_key != "prompt_tokens") return cursor.skip_value();
            std::int64_t tokens = 0;
            if (!cursor.integer(tokens)) return false;
            batch.input_tokens = tokens;
            return true;
        });
    }
};

}  // namespace

const EmbeddingFormat& openai_embedding_format() noexcept {
    static const OpenAIEmbeddings format;
    return format;
}

}  // namespace nous::llm::detail
