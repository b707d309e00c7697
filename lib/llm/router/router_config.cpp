// The router file of `nouscli chat --deployments` into a RouterConfig
// (nous/llm/router.hpp): every field checked, every key read from its
// variable before any connection.

#include <cstdlib>

#include "nous/http/json.hpp"
#include "nous/llm/router.hpp"

namespace nous::llm {

namespace {

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, "router file: " + std::move(message));
}

/// A positive integer member, when present.
bool read_count(const rapidjson::Value& object, const char* name,
                std::optional<std::int64_t>& out) {
    auto m = object.FindMember(name);
    if (m == object.MemberEnd()) return true;
    if (!m->value.IsInt64() || m->value.GetInt64() < 1) return false;
    out = m->value.GetInt64();
    return true;
}

bool read_string(const rapidjson::Value& object, const char* name, std::string& out) {
    auto m = object.FindMember(name);
    if (m == object.MemberEnd()) return true;
    if (!m->value.IsString()) return false;
    out.assign(m->value.GetString(), m->value.GetStringLength());
    return true;
}

Result<Deployment> deployment_of(const rapidjson::Value& item, std::size_t position) {
    const std::string where = "deployment " + std::to_string(position);
    if (!item.IsObject()) return invalid(where + " is not an object");
    Deployment d;
    std::string provider = "openai", key_env;
    if (!read_string(item, "name", d.name) || d.name.empty())
        return invalid(where + " needs a \"name\"");
    const std::string named = "deployment '" + d.name + "'";
    if (!read_string(item, "provider", provider))
        return invalid(named + ": \"provider\" must be a string");
    auto p = provider_from_name(provider);
    if (!p) return invalid(named + ": unknown provider '" + provider + "'");
    d.provider = *p;
    if (!read_string(item, "base_url", d.base_url) || !read_string(item, "model", d.model) ||
        !read_string(item, "api_key_env", key_env) ||
        !read_string(item, "api_version", d.api_version) ||
        !read_string(item, "region", d.region) || !read_string(item, "project", d.project) ||
        !read_string(item, "location", d.location))
        return invalid(named +
                       ": base_url, model, api_key_env, api_version, region, project and location "
                       "must be strings");
    if (d.model.empty()) return invalid(named + " needs a \"model\"");
    if (auto w = item.FindMember("weight"); w != item.MemberEnd()) {
        if (!w->value.IsNumber() || w->value.GetDouble() < 0)
            return invalid(named + ": \"weight\" must be a number of 0 or more");
        d.weight = w->value.GetDouble();
    }
    if (!read_count(item, "rpm", d.rpm) || !read_count(item, "tpm", d.tpm) ||
        !read_count(item, "max_concurrency", d.max_concurrency))
        return invalid(named + ": rpm, tpm and max_concurrency must be integers of 1 or more");
    const bool named_env = !key_env.empty();
    if (!named_env) key_env = default_api_key_env(d.provider);
    const char* key = std::getenv(key_env.c_str());
    // Bedrock and Vertex sign with what the platform finds (SigV4 keys, a
    // Google key file) when their bearer variable is unset: checked per call.
    const bool signs = d.provider == Provider::bedrock || d.provider == Provider::vertex ||
                       d.provider == Provider::vertex_anthropic;
    if (signs && !named_env) {
        d.api_key = key ? key : "";
        return d;
    }
    const bool azure = d.provider == Provider::azure || d.provider == Provider::azure_responses;
    const char* token = azure && !named_env ? std::getenv("AZURE_OPENAI_AD_TOKEN") : nullptr;
    if ((!key || !*key) && token && *token) return d;  // the Entra ID token, read at each call
    if (!key || !*key)
        return Error(nous::http::ErrorCode::invalid_argument,
                     named + ": " + key_env + " is not set (its API key" +
                         (azure && !named_env ? ", or AZURE_OPENAI_AD_TOKEN" : "") + ")");
    d.api_key = key;
    return d;
}

}  // namespace

Result<RouterConfig> router_config_from_json(std::string_view json) {
    auto doc = nous::http::parse_json(json);
    if (!doc || !doc.value()->IsObject()) return invalid("not a JSON object");
    const rapidjson::Value& root = *doc.value();
    RouterConfig config;
    std::string strategy = "weighted";
    if (!read_string(root, "strategy", strategy)) return invalid("\"strategy\" must be a string");
    auto s = route_strategy_from_name(strategy);
    if (!s) return invalid("strategy must be weighted, least_busy or latency");
    config.strategy = *s;
    if (!read_string(root, "shared_state", config.shared_state))
        return invalid("\"shared_state\" must be a string");
    if (auto q = root.FindMember("queue_timeout_ms"); q != root.MemberEnd()) {
        if (!q->value.IsInt64() || q->value.GetInt64() < 0)
            return invalid("\"queue_timeout_ms\" must be an integer of 0 or more");
        config.queue_timeout = std::chrono::milliseconds(q->value.GetInt64());
    }
    auto list = root.FindMember("deployments");
    if (list == root.MemberEnd() || !list->value.IsArray() || list->value.Empty())
        return invalid("\"deployments\" must be a non-empty array");
    for (rapidjson::SizeType i = 0; i < list->value.Size(); ++i) {
        auto d = deployment_of(list->value[i], i);
        if (!d) return d.error();
        config.deployments.push_back(std::move(d.value()));
    }
    return config;
}

}  // namespace nous::llm
