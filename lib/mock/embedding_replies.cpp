// The mock's embeddings replies (embedding_replies.hpp).

#include "embedding_replies.hpp"

#include <rapidjson/document.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "chat_requests.hpp"

namespace nous::http::mock {

namespace {

constexpr std::size_t kDefaultDimensions = 1536;
constexpr std::size_t kMaxDimensions = 65536;
constexpr std::size_t kMaxInputs = 2048;        ///< OpenAI's limit per request
constexpr std::size_t kMaxBatchRequests = 100;  ///< Gemini's limit per batchEmbedContents
/// Values in one answer at most (2048 rows of 4096): a request for more is
/// refused before its answer is made, so no request can exhaust the mock.
constexpr std::size_t kMaxValues = 2048 * 4096;

/// A next value of splitmix64: a well-mixed sequence from one seed.
std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void append_base64(std::string& out, const unsigned char* bytes, std::size_t size) {
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::size_t i = 0;
    for (; i + 3 <= size; i += 3) {
        const std::uint32_t v =
            (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
        out += alphabet[v >> 18];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += alphabet[v & 63];
    }
    if (i < size) {
        const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) |
                                (i + 1 < size ? std::uint32_t{bytes[i + 1]} << 8 : 0u);
        out += alphabet[v >> 18];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < size ? alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
}

/// One vector as the request asked: a base64 string or a float array.
void append_vector(std::string& out, std::string_view text, std::size_t dimensions, bool base64,
                   std::vector<float>& row) {
    row.resize(dimensions);
    mock_embedding(text, dimensions, row.data());
    if (base64) {
        if constexpr (std::endian::native == std::endian::big)
            for (float& v : row)
                v = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<std::uint32_t>(v)));
        out += '"';
        append_base64(out, reinterpret_cast<const unsigned char*>(row.data()),
                      row.size() * sizeof(float));
        out += '"';
        return;
    }
    out += '[';
    char number[32];
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (i) out += ',';
        // The shortest text that reads back as the same float.
        auto [end, ec] = std::to_chars(number, number + sizeof number, row[i]);
        out.append(number, end);
    }
    out += ']';
}

/// The mock's token count of a text, as for chat: about four bytes a token.
std::int64_t tokens_of(std::string_view text) {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(text.size() / 4));
}

bool refuse(MockResponse& error, Format format, const std::string& why) {
    error.status = 400;
    error.body = format == Format::gemini ? gemini_error(400, why, "INVALID_ARGUMENT")
                                          : openai_error(why, "invalid_request_error", "", "input");
    return false;
}

/// `dimensions` / `outputDimensionality` when the request has one: false for a bad one.
bool too_many_values(MockResponse& error, Format format) {
    return refuse(error, format,
                  "the mock answers at most " + std::to_string(kMaxValues) +
                      " values a request (inputs x dimensions)");
}

bool read_dimensions(const rapidjson::Value& object, const char* name, std::size_t& dimensions) {
    auto m = object.FindMember(name);
    if (m == object.MemberEnd()) return true;
    if (!m->value.IsUint64() || m->value.GetUint64() == 0 || m->value.GetUint64() > kMaxDimensions)
        return false;
    dimensions = static_cast<std::size_t>(m->value.GetUint64());
    return true;
}

}  // namespace

void mock_embedding(std::string_view text, std::size_t dimensions, float* out) {
    std::uint64_t seed = 0xcbf29ce484222325ull;  // FNV-1a of the text
    for (unsigned char c : text) seed = (seed ^ c) * 0x100000001b3ull;
    double norm = 0;
    for (std::size_t i = 0; i < dimensions; ++i) {
        // 24 random bits into [-1, 1): exact in a float.
        const float v = static_cast<float>(splitmix(seed) >> 40) / 8388608.0f - 1.0f;
        out[i] = v;
        norm += static_cast<double>(v) * v;
    }
    const double scale = norm > 0 ? 1.0 / std::sqrt(norm) : 0.0;
    for (std::size_t i = 0; i < dimensions; ++i)
        out[i] = static_cast<float>(static_cast<double>(out[i]) * scale);
}

std::optional<EmbeddingRoute> embedding_route(const std::string& method, const std::string& path) {
    if (method != "POST") return std::nullopt;
    if (path == "/v1/embeddings" || path == "/openai/v1/embeddings")
        return EmbeddingRoute{Format::openai, ""};
    if (auto deployment = azure_deployment(path, "/embeddings"))
        return EmbeddingRoute{Format::openai, *deployment};
    const std::string gemini = "/v1beta/models/";
    const std::string suffix = ":batchEmbedContents";
    if (path.rfind(gemini, 0) == 0 && path.size() > gemini.size() + suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
        return EmbeddingRoute{
            Format::gemini,
            path.substr(gemini.size(), path.size() - gemini.size() - suffix.size())};
    return std::nullopt;
}

bool embedding_reply(const EmbeddingRoute& route, const MockRequest& request, std::string& body,
                     std::int64_t& input_tokens, MockResponse& error) {
    rapidjson::Document doc;
    if (const char* why = request_body_problem(request, doc))
        return refuse(error, route.format, why);
    std::vector<float> row;
    input_tokens = 0;
    if (route.format == Format::gemini) {
        auto requests = doc.FindMember("requests");
        if (requests == doc.MemberEnd() || !requests->value.IsArray() || requests->value.Empty())
            return refuse(error, route.format, "requests must be a non-empty array");
        // Gemini's own limit, in its words.
        if (requests->value.Size() > kMaxBatchRequests)
            return refuse(error, route.format,
                          "* BatchEmbedContentsRequest.requests: at most 100 requests can be in "
                          "one batch");
        std::size_t values = 0;
        body = R"({"embeddings":[)";
        bool first = true;
        for (const auto& item : requests->value.GetArray()) {
            std::size_t dimensions = kDefaultDimensions;
            if (!item.IsObject() || !read_dimensions(item, "outputDimensionality", dimensions))
                return refuse(error, route.format,
                              "a request is not an object, or its "
                              "outputDimensionality is out of range");
            std::string text;
            auto content = item.FindMember("content");
            if (content != item.MemberEnd() && content->value.IsObject())
                if (auto parts = content->value.FindMember("parts");
                    parts != content->value.MemberEnd() && parts->value.IsArray())
                    for (const auto& part : parts->value.GetArray())
                        if (part.IsObject() && part.HasMember("text") && part["text"].IsString())
                            text += part["text"].GetString();
            if (text.empty()) return refuse(error, route.format, "a request has no text to embed");
            if ((values += dimensions) > kMaxValues) return too_many_values(error, route.format);
            input_tokens += tokens_of(text);
            if (!first) body += ',';
            first = false;
            body += R"({"values":)";
            append_vector(body, text, dimensions, false, row);
            body += '}';
        }
        body += "]}";
        return true;
    }
    std::vector<std::string_view> inputs;
    auto input = doc.FindMember("input");
    if (input != doc.MemberEnd() && input->value.IsString()) {
        inputs.emplace_back(input->value.GetString(), input->value.GetStringLength());
    } else if (input != doc.MemberEnd() && input->value.IsArray()) {
        for (const auto& item : input->value.GetArray()) {
            if (!item.IsString())
                return refuse(error, route.format, "the mock embeds text inputs only");
            inputs.emplace_back(item.GetString(), item.GetStringLength());
        }
    }
    if (inputs.empty() || inputs.size() > kMaxInputs)
        return refuse(error, route.format, "input must be a string or 1 to 2048 strings");
    for (std::string_view text : inputs)
        if (text.empty()) return refuse(error, route.format, "an input is an empty string");
    std::size_t dimensions = kDefaultDimensions;
    if (!read_dimensions(doc, "dimensions", dimensions))
        return refuse(error, route.format, "dimensions must be between 1 and 65536");
    if (inputs.size() * dimensions > kMaxValues) return too_many_values(error, route.format);
    // The API's own default is floats; the SDKs ask for base64.
    bool base64 = false;
    if (auto f = doc.FindMember("encoding_format"); f != doc.MemberEnd()) {
        const std::string_view asked = f->value.IsString() ? f->value.GetString() : "";
        if (asked != "float" && asked != "base64")
            return refuse(error, route.format, "encoding_format must be float or base64");
        base64 = asked == "base64";
    }
    std::string model = "text-embedding-mock";
    if (auto m = doc.FindMember("model"); m != doc.MemberEnd() && m->value.IsString())
        model = m->value.GetString();
    // OpenAI's older model has one size only.
    if (model == "text-embedding-ada-002" && doc.HasMember("dimensions")) {
        error.status = 400;
        error.body = openai_error("This model does not support specifying dimensions.",
                                  "invalid_request_error", "");
        return false;
    }
    body = R"({"object":"list","data":[)";
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i) body += ',';
        body += R"({"object":"embedding","index":)" + std::to_string(i) + R"(,"embedding":)";
        append_vector(body, inputs[i], dimensions, base64, row);
        body += '}';
        input_tokens += tokens_of(inputs[i]);
    }
    const std::string tokens = std::to_string(input_tokens);
    body += R"(],"model":)" + json_string(model) + R"(,"usage":{"prompt_tokens":)" + tokens +
            R"(,"total_tokens":)" + tokens + "}}";
    return true;
}

}  // namespace nous::http::mock
