// AWS Bedrock: the Converse format at a region's bedrock-runtime endpoint,
// signed with SigV4 (or a Bedrock API key as a bearer). The format
// (formats/bedrock_converse/) knows the body and the answers; this unit
// knows the URL, the region and the signature.
//
// - https://bedrock-runtime.REGION.amazonaws.com/model/{modelId}/converse
//   (converse-stream when streamed); the model id is percent-encoded in the
//   path (a colon is %3A, and %253A in the canonical request). A base URL
//   replaces https://bedrock-runtime.REGION.amazonaws.com.
// - Region: ChatRequest::region, else AWS_REGION, else AWS_DEFAULT_REGION.
// - Credential, first found: the request's key (AWS_BEARER_TOKEN_BEDROCK by
//   convention) as a bearer; else SigV4 (service "bedrock") with the
//   credentials of aws_credentials.hpp, signed when the call is built.
// docs/platforms.md.

#include <cctype>
#include <ctime>

#include "formats/bedrock_converse/bedrock_converse.hpp"
#include "formats/wire_format.hpp"
#include "json/provider_json.hpp"
#include "nous/llm/aws_sigv4.hpp"
#include "platforms/aws_credentials.hpp"
#include "platforms/percent_encoding.hpp"

namespace nous::llm::detail {

namespace {

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

/// host[:port] of an http(s) URL as the Host header carries it (the default port left out).
std::string host_of(std::string_view url, std::string& path) {
    const auto scheme_end = url.find("://");
    const bool https = url.starts_with("https");
    std::string_view rest = scheme_end == std::string_view::npos ? url : url.substr(scheme_end + 3);
    const auto slash = rest.find('/');
    std::string host(rest.substr(0, slash));
    path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (https && host.ends_with(":443")) host.resize(host.size() - 4);
    if (!https && host.ends_with(":80")) host.resize(host.size() - 3);
    return host;
}

class Bedrock final : public WireFormat {
  public:
    Provider provider() const noexcept override { return Provider::bedrock; }
    std::string_view name() const noexcept override { return "bedrock"; }
    /// The service model's InferenceConfiguration: temperature min 0, max 1.
    std::optional<double> max_temperature() const noexcept override { return 1.0; }
    std::string_view default_base_url() const noexcept override { return ""; }
    std::string_view default_api_key_env() const noexcept override {
        return "AWS_BEARER_TOKEN_BEDROCK";
    }

    std::string url(const ChatRequest& request, const std::string& base) const override {
        const std::string host = base.empty() ? "https://bedrock-runtime." +
                                                    aws_region(request.region) + ".amazonaws.com"
                                              : base;
        return host + "/model/" + percent_encode(request.model) +
               (request.stream ? "/converse-stream" : "/converse");
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_bearer_auth(headers, request.api_key);
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        // The request's own checks first: the credentials' search may ask
        // the network (EC2's instance metadata) for a request refused anyway.
        if (auto bad = converse_check(request, parsed, *this)) return bad;
        if (aws_region(request.region).empty())
            return invalid("bedrock needs a region: AWS_REGION or AWS_DEFAULT_REGION (--region)");
        if (request.api_key.empty()) {
            std::string tried;
            if (!aws_credentials(tried))
                return invalid("bedrock needs credentials: AWS_BEARER_TOKEN_BEDROCK, or " + tried);
        }
        return std::nullopt;
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        converse_write_body(w, request, parsed);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return write_converse_cache(body, request, *this);
    }
    std::optional<Error> count_request(const ChatRequest& request, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        url = this->url(request, base);
        url.resize(url.rfind('/'));
        url += "/count-tokens";
        converse_count_body(body);
        return std::nullopt;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return int_member(root, "inputTokens");
    }
    std::optional<Error> sign(HttpCall& call, const ChatRequest& request) const override {
        if (!request.api_key.empty()) return std::nullopt;  // a Bedrock API key: the bearer
        std::string tried;
        auto credentials = aws_credentials(tried);
        if (!credentials)
            return invalid("bedrock needs credentials: AWS_BEARER_TOKEN_BEDROCK, or " + tried);
        SigV4Request signing;
        signing.method = "POST";
        const std::string host = host_of(call.url, signing.path);
        if (const auto q = signing.path.find('?'); q != std::string::npos) {
            signing.query = signing.path.substr(q + 1);
            signing.path.resize(q);
        }
        std::erase_if(call.headers, [](const auto& h) {
            return nous::http::header_name_equals(h.first, "host");
        });
        call.headers.emplace_back("Host", host);
        signing.headers = std::move(call.headers);
        signing.body = call.body;
        sigv4_sign(signing, *credentials, aws_region(request.region), "bedrock",
                   std::time(nullptr));
        call.headers = std::move(signing.headers);
        return std::nullopt;
    }
    bool signs_each_attempt(const ChatRequest& request) const override {
        return request.api_key.empty();  // SigV4; a Bedrock API key is a bearer, signed by nothing
    }
    nous::http::StreamFormat stream_format() const noexcept override {
        return nous::http::StreamFormat::aws_event_stream;
    }
    std::unique_ptr<EventReader> event_reader() const override { return converse_event_reader(); }
    std::string_view terminal_signal() const noexcept override { return "messageStop"; }
    std::optional<Error> read_whole(const rapidjson::Value& root,
                                    std::vector<Delta>& out) const override {
        return converse_read_whole(root, out);
    }
    std::string error_message(const rapidjson::Value& root) const override {
        return converse_error_message(root);
    }
};

}  // namespace

const WireFormat& bedrock_format() noexcept {
    static const Bedrock format;
    return format;
}

}  // namespace nous::llm::detail
