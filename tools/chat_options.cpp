// nouscli chat's request options (chat_options.hpp).

#include "chat_options.hpp"

#include <memory>

#include "nous/llm/cost.hpp"

namespace nouscli {

void ChatRequestOptions::add_to(po::options_description& desc) {
    desc.add_options()("schema", po::value(&schema_file_),
                       "structured output: FILE holds a JSON Schema object")(
        "schema-name", po::value(&schema_name_), "the schema's name (default \"response\")")(
        "no-strict", "strict false (the OpenAI formats); no strict-dialect check")(
        "json-object", "plain JSON output without a schema (not with --schema)")(
        "partial", "with --schema or --json-object: one line per delta, the partial value so far")(
        "tool-choice", po::value(&tool_choice_), "auto|none|required|NAME")(
        "no-parallel-tool-calls", "at most one tool call a turn")(
        "stop", po::value(&stop_)->composing(), "a stop sequence (repeatable)")(
        "temperature", po::value(&temperature_), "sampling temperature")(
        "top-p", po::value(&top_p_), "nucleus sampling")("seed", po::value(&seed_),
                                                         "sampling seed")(
        "extra-body", po::value(&extra_body_),
        "a JSON object merged into the request body last; @FILE reads a file")(
        "anthropic-version", po::value(&anthropic_version_),
        "the anthropic-version header (default 2023-06-01)")(
        "region", po::value(&region_),
        "bedrock: the AWS region (default AWS_REGION, AWS_DEFAULT_REGION)")(
        "project", po::value(&project_), "vertex*: the project (default GOOGLE_CLOUD_PROJECT)")(
        "location", po::value(&location_),
        "vertex*: the location (default GOOGLE_CLOUD_LOCATION, else global)")(
        "api-version", po::value(&api_version_),
        "azure: api-version=V on the query (the deployments form of the base URL)")(
        "tool-strict",
        "tools with strict true (default false, always written where the format has it)")(
        "cache", po::value(&cache_),
        "prompt caching (anthropic): auto, or breakpoints: a comma list of system,tools,last")(
        "cache-ttl", po::value(&cache_ttl_), "5m|1h: the cache breakpoints' time to live")(
        "prompt-cache-key", po::value(&prompt_cache_key_), "the OpenAI formats' prompt_cache_key")(
        "prompt-cache-retention", po::value(&prompt_cache_retention_),
        "in_memory|24h: the OpenAI formats' prompt_cache_retention")(
        "cached-content", po::value(&cached_content_),
        "gemini: the name of a cache made beforehand (cachedContent)")(
        "prices", po::value(&prices_file_),
        "a price table (JSON, docs/cost.md): --json adds \"cost_usd\"");
}

bool ChatRequestOptions::apply(const po::variables_map& vm, nous::llm::ChatRequest& request,
                               std::string& error) const {
    const bool schema = vm.count("schema") > 0, json_object = vm.count("json-object") > 0;
    if (schema && json_object) {
        error = "--schema and --json-object cannot both be given";
        return false;
    }
    if (partial_ && !schema && !json_object) {
        error = "--partial needs --schema or --json-object";
        return false;
    }
    if (schema) {
        nous::llm::ResponseFormat format;
        if (!read_data_argument("@" + schema_file_, format.schema, error)) {
            error = "--schema: " + error;
            return false;
        }
        format.name = schema_name_;
        format.strict = vm.count("no-strict") == 0;
        request.response_format = std::move(format);
    } else if (json_object) {
        nous::llm::ResponseFormat format;
        format.kind = nous::llm::ResponseFormat::Kind::json_object;
        format.strict = false;
        request.response_format = std::move(format);
    }
    if (vm.count("tool-choice")) {
        if (tool_choice_.empty()) {
            error = "--tool-choice must be auto, none, required or a tool's name";
            return false;
        }
        request.tool_choice = nous::llm::ToolChoice::from_name(tool_choice_);
    }
    if (vm.count("no-parallel-tool-calls")) request.parallel_tool_calls = false;
    request.stop = stop_;
    if (vm.count("temperature")) request.temperature = temperature_;
    if (vm.count("top-p")) request.top_p = top_p_;
    if (vm.count("seed")) request.seed = seed_;
    if (vm.count("tool-strict")) {
        if (request.tools.empty()) {
            error = "--tool-strict needs --tools";
            return false;
        }
        for (auto& tool : request.tools) tool.strict = true;
    }
    if (vm.count("cache") || vm.count("cache-ttl")) {
        nous::llm::PromptCache cache;
        cache.ttl = cache_ttl_;
        std::string list = cache_ + ",";
        for (std::size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos;
             at = comma + 1) {
            const std::string part = list.substr(at, comma - at);
            if (part == "auto") {
                cache.automatic = true;
            } else if (part == "system") {
                cache.system = true;
            } else if (part == "tools") {
                cache.tools = true;
            } else if (part == "last") {
                cache.last_message = true;
            } else {
                error = "--cache is auto, or a comma list of system, tools and last, not '" + part +
                        "'";
                return false;
            }
        }
        request.cache = cache;  // the library refuses what a format does not take
    }
    request.prompt_cache_key = prompt_cache_key_;
    request.prompt_cache_retention = prompt_cache_retention_;
    request.cached_content = cached_content_;
    if (vm.count("prices")) {
        std::string text;
        if (!read_data_argument("@" + prices_file_, text, error)) {
            error = "--prices: " + error;
            return false;
        }
        auto table = nous::llm::PriceTable::from_json(text);
        if (!table) {
            error = "--prices: " + table.error().message;
            return false;
        }
        request.prices = std::make_shared<const nous::llm::PriceTable>(std::move(table.value()));
    }
    if (vm.count("anthropic-version")) {
        if (anthropic_version_.empty()) {
            error = "--anthropic-version needs a version (YYYY-MM-DD)";
            return false;
        }
        request.anthropic_version = anthropic_version_;
    }
    if (vm.count("region")) {
        if (region_.empty()) {
            error = "--region needs a region";
            return false;
        }
        request.region = region_;
    }
    if (vm.count("project")) request.project = project_;
    if (vm.count("location")) request.location = location_;
    if (vm.count("api-version")) {
        if (api_version_.empty()) {
            error = "--api-version needs a version";
            return false;
        }
        request.api_version = api_version_;
    }
    if (vm.count("extra-body")) {
        std::string body = extra_body_;
        if (body.empty()) {
            error = "--extra-body must be a JSON object";
            return false;
        }
        if (!body.empty() && body[0] == '@' && !read_data_argument(extra_body_, body, error)) {
            error = "--extra-body: " + error;
            return false;
        }
        request.extra_body = std::move(body);
    }
    return true;
}

}  // namespace nouscli
