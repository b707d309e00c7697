// Google Vertex AI: Gemini (vertex) and Anthropic (vertex-anthropic) models
// at a project's location, with an OAuth2 bearer from Google's
// application-default chain (google_credentials.hpp). The formats are
// Gemini's and Anthropic's own; this unit gives the URL, the bearer, and
// Anthropic's Vertex body (no model, its anthropic_version in the body).
//
// - https://LOCATION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/LOCATION
//   (LOCATION global: https://aiplatform.googleapis.com/v1/...); a base URL
//   replaces https://HOST/v1.
//   Gemini: .../publishers/google/models/M:generateContent (:streamGenerateContent?alt=sse).
//   Anthropic: .../publishers/anthropic/models/M:rawPredict (:streamRawPredict).
// - PROJECT: ChatRequest::project, else GOOGLE_CLOUD_PROJECT, else the key
//   file's project_id. LOCATION: ChatRequest::location, else
//   GOOGLE_CLOUD_LOCATION, else global.
// - Credential, first found: the request's key (GOOGLE_OAUTH_ACCESS_TOKEN
//   by convention) as the bearer; else the key file's access token, cached
//   for the process; a 401 drops it and the call is made once more.
// docs/platforms.md.

#include <cstdlib>

#include "formats/request_json.hpp"
#include "formats/wire_format.hpp"
#include "platforms/google_credentials.hpp"

namespace nous::llm::detail {

const WireFormat& gemini_format() noexcept;
const WireFormat& anthropic_format() noexcept;

namespace {

constexpr const char* kAnthropicVertexVersion = "vertex-2023-10-16";

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, std::move(message));
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

std::string location_of(const ChatRequest& r) {
    if (!r.location.empty()) return r.location;
    if (std::string l = env("GOOGLE_CLOUD_LOCATION"); !l.empty()) return l;
    return "global";
}

std::string project_of(const ChatRequest& r) {
    if (!r.project.empty()) return r.project;
    if (std::string p = env("GOOGLE_CLOUD_PROJECT"); !p.empty()) return p;
    if (std::string file = google_key_file(); !file.empty()) return google_key_project(file);
    return {};
}

class Vertex final : public WireFormat {
  public:
    Vertex(const WireFormat& format, Provider provider, std::string_view name, bool anthropic)
        : format_(format), provider_(provider), name_(name), anthropic_(anthropic) {}

    Provider provider() const noexcept override { return provider_; }
    std::string_view name() const noexcept override { return name_; }
    std::optional<double> max_temperature() const noexcept override {
        return format_.max_temperature();
    }
    std::string_view default_base_url() const noexcept override { return ""; }
    std::string_view default_api_key_env() const noexcept override {
        return "GOOGLE_OAUTH_ACCESS_TOKEN";
    }

    /// https://HOST/v1/projects/P/locations/L/publishers/ (the host: `base`, else the location's).
    static std::string publishers(const ChatRequest& request, const std::string& base) {
        const std::string location = location_of(request);
        const std::string host = !base.empty() ? base
                                 : location == "global"
                                     ? std::string("https://aiplatform.googleapis.com/v1")
                                     : "https://" + location + "-aiplatform.googleapis.com/v1";
        return host + "/projects/" + project_of(request) + "/locations/" + location +
               "/publishers/";
    }

    std::string url(const ChatRequest& request, const std::string& base) const override {
        const std::string at = publishers(request, base);
        if (!anthropic_) return format_.url(request, at + "google");
        return at + "anthropic/models/" + request.model +
               (request.stream ? ":streamRawPredict" : ":rawPredict");
    }
    void add_headers(Headers& headers, const ChatRequest& request) const override {
        nous::http::add_bearer_auth(headers, request.api_key);
    }
    std::optional<Error> check(const ChatRequest& request,
                               const RequestJson& parsed) const override {
        if (auto bad = model_in_path_check(request.model, name_)) return bad;
        if (project_of(request).empty())
            return invalid(std::string(name_) +
                           " needs a project: GOOGLE_CLOUD_PROJECT (--project), or a key file "
                           "with a project_id");
        // Without a token or a key file, the metadata server is asked when the call is signed.
        return format_.check(request, parsed);
    }
    void write_body(Writer& w, const ChatRequest& request,
                    const RequestJson& parsed) const override {
        if (!anthropic_) return format_.write_body(w, request, parsed);
        // Anthropic on Vertex: the Messages body without its model (the URL
        // names it), with Vertex's anthropic_version.
        rapidjson::StringBuffer buffer;
        Writer inner(buffer);
        format_.write_body(inner, request, parsed);
        rapidjson::Document doc;
        doc.Parse(buffer.GetString(), buffer.GetSize());
        doc.RemoveMember("model");
        doc.AddMember("anthropic_version", rapidjson::StringRef(kAnthropicVertexVersion),
                      doc.GetAllocator());
        doc.Accept(w);
    }
    std::optional<Error> write_cache(rapidjson::Document& body,
                                     const ChatRequest& request) const override {
        return format_.write_cache(body, request);
    }
    std::optional<Error> count_request(const ChatRequest& request, const std::string& base,
                                       std::string& url, rapidjson::Document& body) const override {
        const std::string at = publishers(request, base);
        if (!anthropic_) {
            // Vertex's CountTokensRequest: the request's own members, unwrapped.
            url = at + "google/models/" + request.model + ":countTokens";
            keep_members(body, {"contents", "systemInstruction", "tools", "generationConfig"});
            return std::nullopt;
        }
        // Anthropic's counter on Vertex: its count body with the model named in it.
        url = at + "anthropic/models/count-tokens:rawPredict";
        keep_members(body, {"messages", "system", "tools", "tool_choice", "thinking",
                            "output_config", "anthropic_version"});
        body.AddMember("model", rapidjson::Value(request.model.c_str(), body.GetAllocator()),
                       body.GetAllocator());
        return std::nullopt;
    }
    std::optional<std::int64_t> count_of(const rapidjson::Value& root) const override {
        return format_.count_of(root);
    }
    std::optional<Error> sign(HttpCall& call, const ChatRequest& request) const override {
        if (!request.api_key.empty()) return std::nullopt;
        auto token = google_access_token(google_key_file());
        if (!token) return token.error();
        std::erase_if(call.headers, [](const auto& h) {
            return nous::http::header_name_equals(h.first, "authorization");
        });
        nous::http::add_bearer_auth(call.headers, token.value());
        return std::nullopt;
    }
    bool renew_credentials(const ChatRequest& request) const override {
        if (!request.api_key.empty()) return false;  // a token of the caller's: ours to keep
        forget_google_token(google_key_file());
        return true;
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

  private:
    const WireFormat& format_;
    const Provider provider_;
    const std::string_view name_;
    const bool anthropic_;
};

}  // namespace

const WireFormat& vertex_format() noexcept {
    static const Vertex format(gemini_format(), Provider::vertex, "vertex", false);
    return format;
}

const WireFormat& vertex_anthropic_format() noexcept {
    static const Vertex format(anthropic_format(), Provider::vertex_anthropic, "vertex-anthropic",
                               true);
    return format;
}

}  // namespace nous::llm::detail
