// Azure OpenAI: the OpenAI formats (chat completions, Responses) at an Azure
// resource, with Azure's credential and URL forms. A platform, not a format:
// the body, the readers and the errors are the OpenAI format's own; this unit
// adds where the call goes and how it is signed.
//
// - Base URL (required, no default): the v1 API,
//   https://RESOURCE.openai.azure.com/openai/v1 (the model is the deployment's
//   name), or the deployments form .../openai/deployments/DEPLOYMENT, which
//   needs an API version. Responses has the v1 form only.
// - `api-version=V` on the query of every URL when the request names one.
// - Credential, first found: the request's key (AZURE_OPENAI_API_KEY by
//   convention) as the `api-key` header, else AZURE_OPENAI_AD_TOKEN (an
//   Entra ID token) as `Authorization: Bearer`, read when the call is made.
// docs/platforms.md.

#include <cctype>
#include <cstdlib>

#include "embeddings/embedding_format.hpp"
#include "formats/wire_format.hpp"
#include "json/provider_json.hpp"
#include "platforms/percent_encoding.hpp"

namespace nous::llm::detail {

const WireFormat& openai_chat_format() noexcept;
const WireFormat& openai_responses_format() noexcept;

namespace {

constexpr std::string_view kDeployments = "/openai/deployments/";
/// The most tools, and stop sequences, one chat completion takes.
constexpr std::size_t kMostTools = 128, kMostStops = 4;

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

std::string with_api_version(std::string url, const std::string& api_version) {
    if (api_version.empty()) return url;
    url += url.find('?') == std::string::npos ? '?' : '&';
    return url + "api-version=" + percent_encode(api_version);
}

/// Azure's embeddings: OpenAI's, at the same base, with the API version.
class AzureEmbeddings final : public EmbeddingFormat {
  public:
    std::string url(const EmbedRequest& request, const std::string& base) const override {
        return with_api_version(openai().url(request, base), request.api_version);
    }
    void write_body(Writer& w, const EmbedRequest& request, std::size_t first,
                    std::size_t count) const override {
        openai().write_body(w, request, first, count);
    }
    std::size_t default_batch_size() const noexcept override {
        return openai().default_batch_size();
    }
    /// Azure serves OpenAI's models only, and so OpenAI's 2048 inputs a
    /// request. The model is a deployment's name: no rule of a model's.
    std::optional<std::string> refusal(const EmbedRequest& request) const override {
        return batch_over(request, default_batch_size(), "azure");
    }
    std::size_t token_budget() const noexcept override { return openai().token_budget(); }
    const char* list_key() const noexcept override { return openai().list_key(); }
    std::optional<std::string> read_item(JsonCursor& cursor, BatchReading& batch,
                                         std::size_t position) const override {
        return openai().read_item(cursor, batch, position);
    }
    bool read_member(std::string_view key, JsonCursor& cursor, BatchReading& batch) const override {
        return openai().read_member(key, cursor, batch);
    }

  private:
    static const EmbeddingFormat& openai() noexcept { return openai_embedding_format(); }
};

class AzureOpenAI final : public WireFormat {
  public:
    AzureOpenAI(const WireFormat& format, Provider provider, std::string_view name)
        : format_(format), provider_(provider), name_(name) {}

    Provider provider() const noexcept override { return provider_; }
    std::string_view name() const noexcept override { return name_; }
    /// Azure serves OpenAI's models only: OpenAI's 0 to 2.
    std::optional<double> max_temperature() const noexcept override { return 2.0; }
    std::string_view default_base_url() const noexcept override { return ""; }
    std::string_view default_api_key_env() const noexcept override {
        return "AZURE_OPENAI_API_KEY";
    }

    std::string url(const ChatRequest& request, const std::string& base) const override {
        return with_api_version(format_.url(request, base), request.api_version);
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        if (!request.api_key.empty()) {
            nous::http::add_api_key(headers, "api-key", request.api_key);
            return;
        }
        if (const char* token = std::getenv("AZURE_OPENAI_AD_TOKEN"); token && *token)
            nous::http::add_bearer_auth(headers, token);
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        if (request.base_url.empty())
            return invalid(std::string(name_) +
                           " needs a base URL: https://RESOURCE.openai.azure.com/openai/v1, or "
                           ".../openai/deployments/DEPLOYMENT with an API version");
        const bool deployments = request.base_url.find(kDeployments) != std::string::npos;
        if (deployments && provider_ == Provider::azure_responses)
            return invalid(
                "azure-responses takes the v1 base URL only (https://RESOURCE.openai.azure.com/"
                "openai/v1): Azure has no Responses route under deployments");
        if (deployments && request.api_version.empty())
            return invalid(
                "a base URL of the deployments form needs an API version "
                "(api_version, --api-version)");
        // OpenAI's chat completions: "A max of 128 functions are supported"
        // (a 400, "array_above_max_length"). The openai format leaves it to
        // the server: the others that speak it take more.
        if (provider_ == Provider::azure && request.tools.size() > kMostTools)
            return invalid(std::string(name_) + " takes " + std::to_string(kMostTools) +
                           " tools at most (" + std::to_string(request.tools.size()) + " given)");
        // "Up to 4 sequences" (OpenAI's request type).
        if (provider_ == Provider::azure && request.stop.size() > kMostStops)
            return invalid(std::string(name_) + " takes " + std::to_string(kMostStops) +
                           " stop sequences at most (" + std::to_string(request.stop.size()) +
                           " given)");
        return format_.check(request, parsed);
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        format_.write_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return format_.write_cache(body, request);
    }
    std::optional<Error> count_request(const ChatRequest& request, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        auto error = format_.count_request(request, base, url, body);
        if (!error) url = with_api_version(url, request.api_version);
        return error;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return format_.count_of(root);
    }
    std::unique_ptr<EventReader> event_reader() const override { return format_.event_reader(); }
    std::string_view terminal_signal() const noexcept override { return format_.terminal_signal(); }
    bool has_keepalive_events() const noexcept override { return format_.has_keepalive_events(); }
    std::optional<Error> read_whole(const rapidjson::Value& root,
                                    std::vector<Delta>& out) const override {
        return format_.read_whole(root, out);
    }
    std::string error_message(const rapidjson::Value& root) const override {
        return format_.error_message(root);
    }
    const EmbeddingFormat* embeddings() const noexcept override {
        static const AzureEmbeddings azure;
        return &azure;
    }

  private:
    const WireFormat& format_;
    const Provider provider_;
    const std::string_view name_;
};

}  // namespace

const WireFormat& azure_chat_format() noexcept {
    static const AzureOpenAI format(openai_chat_format(), Provider::azure, "azure");
    return format;
}

const WireFormat& azure_responses_format() noexcept {
    static const AzureOpenAI format(openai_responses_format(), Provider::azure_responses,
                                    "azure-responses");
    return format;
}

}  // namespace nous::llm::detail
