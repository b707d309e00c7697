// nouscli chat: one chat request through the provider helpers, the text
// printed as it arrives (or the message as JSON), in each provider's format.

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "chat_options.hpp"
#include "cli.hpp"
#include "nous/http/json.hpp"
#include "nous/http/log.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/metrics.hpp"
#include "nous/llm/router.hpp"
#include "otlp_export.hpp"

namespace nouscli {

using namespace nous::http;

namespace {

/// nouscli chat, or (`count`) nouscli count-tokens: the same request, counted.
int chat_or_count(int argc, char** argv, bool count) {
    const char* command = count ? "count-tokens" : "chat";
    po::options_description desc(
        count ? "nouscli count-tokens PROMPT [options]  (PROMPT \"-\" reads stdin)"
              : "nouscli chat PROMPT [options]  (PROMPT \"-\" reads stdin)");
    std::string provider_name = "openai", base_url, model, system, api_key_env;
    int max_tokens = -1;
    long long event_timeout_ms = -1;
    std::string messages_file, tools_file, reasoning, deployments_file, metrics_file;
    std::vector<std::string> images;
    ConnectionOptions connection;
    ChatRequestOptions request_options;
    desc.add_options()("help,h", "show this help")(
        "provider", po::value(&provider_name),
        "openai|openai-responses|anthropic|gemini|azure|azure-responses|bedrock|vertex|vertex-"
        "anthropic (default openai)")("base-url", po::value(&base_url),
                                      "API base URL (default: the provider's)")(
        "model", po::value(&model), "model name (required)")("system", po::value(&system),
                                                             "system prompt")(
        "max-tokens", po::value(&max_tokens),
        "maximum output tokens (anthropic: 1024 unless given)")("no-stream",
                                                                "one non-streaming request")(
        "json", "print the final message as one JSON object instead of the text")(
        "api-key-env", po::value(&api_key_env), "variable holding the key (default by provider)")(
        "event-timeout-ms", po::value(&event_timeout_ms),
        "exit 4 when no content event arrives for N ms (keep-alive comments and pings do not "
        "count)")("messages", po::value(&messages_file),
                  "the conversation so far, a JSON array in OpenAI chat shape (\"-\": stdin)")(
        "tools", po::value(&tools_file), "tools: [{\"name\",\"description\",\"parameters\"}]")(
        "image", po::value(&images), "an image (https or data: URL) on the PROMPT (repeatable)")(
        "reasoning", po::value(&reasoning), "low|medium|high: ask for reasoning")(
        "show-reasoning", "reasoning text to stderr as it arrives")(
        "deployments", po::value(&deployments_file),
        "run the call through a router of the deployments in FILE (docs/router.md); --model and "
        "--retry are then refused")("metrics-out", po::value(&metrics_file),
                                    "write the Prometheus text of the built-in metrics to FILE "
                                    "after the call")(
        "otlp",
        "export the call's span and metrics by OTLP/HTTP JSON to the OTEL_EXPORTER_OTLP_* endpoint "
        "before exiting (flushed, bounded by OTEL_EXPORTER_OTLP_TIMEOUT)");
    request_options.add_to(desc);
    connection.add_to(desc);
    std::string prompt;
    po::variables_map vm;
    if (auto end = parse_command(command, argc, argv, desc, vm, "prompt", &prompt)) return *end;
    connection.take_flags(vm);
    request_options.take_flags(vm);
    auto provider = nous::llm::provider_from_name(provider_name);
    if (!provider)
        return usage_error(command,
                           "--provider must be openai, openai-responses, anthropic, gemini, azure, "
                           "azure-responses, bedrock, vertex or vertex-anthropic");
    if (!vm.count("prompt") && messages_file.empty())
        return usage_error(command, "chat needs a PROMPT (\"-\" reads stdin) or --messages");
    if (!reasoning.empty() && !nous::llm::reasoning_effort_from_name(reasoning))
        return usage_error(command, "--reasoning must be low, medium or high");
    const bool routed = !deployments_file.empty();
    if (routed && (vm.count("model") || vm.count("retry")))
        return usage_error(command,
                           "--deployments names each deployment's model and fails over "
                           "instead of retrying: --model and --retry are refused with it");
    if (!routed && model.empty()) return usage_error(command, "chat needs --model");
    nous::llm::ChatRequest request;
    std::string bad;
    if (!connection.parse(request.headers, bad)) return usage_error(command, bad);
    if (prompt == "-" && messages_file == "-")
        return usage_error(command, "PROMPT and --messages cannot both read stdin");
    if (prompt == "-")
        prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    // Files are read and checked before the key and before any connection.
    auto read_json_option = [&](const char* option, const std::string& file, auto parse,
                                auto& into) -> std::optional<int> {
        if (file.empty()) return std::nullopt;
        std::string text, why;
        if (!read_data_argument("@" + file, text, why))
            return usage_error(command, std::string(option) + ": " + why);
        auto parsed = parse(text);
        if (!parsed)
            return usage_error(command, std::string(option) + ": " + parsed.error().message);
        into = std::move(parsed.value());
        return std::nullopt;
    };
    std::vector<nous::llm::ChatMessage> conversation;
    std::vector<nous::llm::ToolSpec> tools;
    if (auto end = read_json_option("--messages", messages_file, nous::llm::messages_from_json,
                                    conversation))
        return *end;
    if (auto end = read_json_option("--tools", tools_file, nous::llm::tools_from_json, tools))
        return *end;
    // The router file, read and checked (each key from its variable) before any connection.
    std::unique_ptr<nous::llm::Router> router;
    bool router_shares_state = false;
    if (routed) {
        std::string text, why;
        if (!read_data_argument("@" + deployments_file, text, why))
            return usage_error(command, "--deployments: " + why);
        auto config = nous::llm::router_config_from_json(text);
        if (!config) return usage_error(command, "--deployments: " + config.error().message);
        router_shares_state = !config->shared_state.empty();
        auto made = nous::llm::Router::create(std::move(config.value()));
        if (!made) return usage_error(command, "--deployments: " + made.error().message);
        router = std::move(made.value());
    }
    // A missing credential exits 2 before any connection.
    std::string key, missing;
    if (!routed && !credential_from_env(*provider, api_key_env, key, missing))
        return usage_error(command, missing);

    request.provider = *provider;
    request.base_url = base_url;
    request.api_key = key;
    request.model = model;
    request.system = system;
    request.messages = std::move(conversation);
    if (vm.count("prompt")) {
        std::vector<nous::llm::ContentPart> parts;
        for (const std::string& url : images) parts.push_back(nous::llm::ContentPart::image(url));
        request.messages.push_back(nous::llm::ChatMessage::user(prompt, std::move(parts)));
    } else if (!images.empty()) {
        return usage_error(command, "--image needs a PROMPT to attach to");
    }
    request.tools = std::move(tools);
    if (!reasoning.empty())
        request.reasoning_effort = nous::llm::reasoning_effort_from_name(reasoning);
    const bool show_reasoning = vm.count("show-reasoning") > 0;
    // Given, it is sent as given: one below 1 is refused by the checks, not dropped.
    if (vm.count("max-tokens")) request.max_tokens = max_tokens;
    request.stream = vm.count("no-stream") == 0;
    if (!request_options.apply(vm, request, bad)) return usage_error(command, bad);
    // Built here too for the checks and -v; run_chat builds the same call.
    // (A routed call is built per deployment: each attempt is shown instead.)
    auto call = nous::llm::build_chat_call(request);
    if (!routed) {
        // A platform's token endpoint that refused is the platform's answer (exit 5), not usage.
        if (!call && call.error().code != ErrorCode::invalid_argument)
            return report_provider_error(call.error(), connection.verbose());
        if (!call) return usage_error(command, call.error().message);
        if (auto e = validate_url(call->url)) return usage_error(command, e->message);
    }

    Options options;
    connection.apply(options);
    if (vm.count("event-timeout-ms")) {
        if (event_timeout_ms <= 0)
            return usage_error(command, "--event-timeout-ms must be a positive number");
        options.event_idle_timeout = Milliseconds(event_timeout_ms);
    }
    const bool json = vm.count("json") > 0;
    connection.set_log_level();
    if (count) {
        if (routed) return usage_error(command, "--deployments is for chat, not count-tokens");
        auto n = nous::llm::count_tokens(request, options);
        if (!n) {  // no counter for the provider: a usage error, before any connection
            if (n.error().code == ErrorCode::invalid_argument)
                return usage_error(command, n.error().message);
            return report_provider_error(n.error(), connection.verbose());
        }
        write_out(stdout, json ? "{\"input_tokens\":" + std::to_string(n.value()) + "}\n"
                               : std::to_string(n.value()) + "\n");
        return 0;
    }
    // --otlp: its variables are checked before any connection.
    OtlpExport otlp;
    if (vm.count("otlp"))
        if (auto bad = otlp.start()) return usage_error(command, *bad);
    if (router && router_shares_state && !connection.verbose() && !std::getenv("NOUS_LOG_LEVEL")) {
        // Quiet as ever but for one line: a fleet that lost its shared
        // limits (and runs on this process's own counts) says so on stderr.
        nous::http::set_log_level(nous::http::LogLevel::warning);
        nous::http::set_log_sink([](nous::http::LogLevel level, std::string_view message) {
            if (level == nous::http::LogLevel::error || message.starts_with("router: shared state"))
                std::cerr << "nous-http "
                          << (level == nous::http::LogLevel::error ? "error" : "warning") << ": "
                          << message << "\n";
        });
    }
    if (connection.verbose() && !routed) print_request(call->url, call->headers, call->body);

    // Text printed as it arrives, flushed per delta (unless --json); a closed
    // stdout stops the stream at once.
    bool printed_any = false;
    bool reasoning_open = false;  ///< reasoning printed on stderr, its line not ended yet
    bool stdout_closed = false;
    // --partial: the answer read as it streams, its value printed after each delta.
    const bool partial = request_options.partial();
    nous::llm::PartialJson partial_reader;
    std::string last_partial;
    // --metrics-out: the built-in metrics hear this call (docs/telemetry.md).
    std::shared_ptr<nous::llm::Metrics> metrics;
    if (!metrics_file.empty()) metrics = std::make_shared<nous::llm::Metrics>();
    if (metrics && otlp.observer())
        request.observer = nous::llm::observe_all({metrics, otlp.observer()});
    else if (metrics)
        request.observer = metrics;
    else
        request.observer = otlp.observer();
    nous::llm::RouteReport route;
    const std::function<bool(const nous::llm::Delta&)> on_delta = [&](const nous::llm::Delta& d) {
        // Reasoning goes to stderr, never to stdout.
        if (show_reasoning && !d.reasoning.empty()) {
            std::cerr << d.reasoning << std::flush;
            reasoning_open = true;
        }
        if (json || d.text.empty()) return true;
        if (partial) {
            if (!partial_reader.feed(d.text)) return true;  // not JSON: said at the end
            if (partial_reader.value().type == nous::llm::JsonValue::Type::null &&
                !partial_reader.complete())
                return true;  // nothing of the value yet
            std::string line = partial_reader.value().to_json();
            if (line == last_partial) return true;
            last_partial = line;
            stdout_closed = !write_out(stdout, line + "\n");
            return !stdout_closed;
        }
        if (reasoning_open) {  // the answer starts: end the reasoning's line first
            std::cerr << "\n" << std::flush;
            reasoning_open = false;
        }
        printed_any = true;
        stdout_closed = !write_out(stdout, d.text);
        return !stdout_closed;
    };
    auto result = routed ? router->chat(request, options, on_delta, &route)
                         : nous::llm::run_chat(request, options, on_delta);
    if (metrics) {
        std::FILE* out = std::fopen(metrics_file.c_str(), "wb");
        const bool written = out && write_out(out, metrics->prometheus_text());
        if (out) std::fclose(out);
        if (!written) std::cerr << "nouscli: cannot write " << metrics_file << "\n";
    }
    // -v: each deployment a routed call tried, and why it moved on.
    if (connection.verbose())
        for (const auto& attempt : route.attempts)
            std::cerr << "* deployment " << attempt.deployment << ": "
                      << (attempt.reason.empty() ? "answered" : attempt.reason) << "\n";
    if (reasoning_open) std::cerr << "\n";
    if (stdout_closed) return ok;
    // -v: the response's request id and rate-limit headers, as sent.
    auto print_operations_headers = [&](const Headers& headers) {
        if (!connection.verbose()) return;
        for (const auto& [name, value] : headers) {
            const bool wanted =
                name.rfind("x-ratelimit-", 0) == 0 || name.rfind("anthropic-ratelimit-", 0) == 0 ||
                name == "retry-after" || name == "retry-after-ms" || name == "x-request-id" ||
                name == "request-id" || name == "x-generation-id" || name == "x-should-retry";
            if (wanted) std::cerr << "< " << name << ": " << value << "\n";
        }
    };
    if (!result) {
        const Error& e = result.error();
        if (printed_any) write_out(stdout, "\n");
        print_operations_headers(e.headers);
        return report_provider_error(e, connection.verbose());
    }
    const nous::llm::ChatResult& message = result.value();
    print_operations_headers(message.headers);
    if (connection.verbose() && !message.request_id.empty())
        std::cerr << "* request id " << message.request_id << "\n";
    if (connection.verbose() && message.rate_limit) {
        const auto& rl = *message.rate_limit;
        auto count = [](const std::optional<std::int64_t>& v) {
            return v ? std::to_string(*v) : std::string("?");
        };
        std::cerr << "* rate limit: requests " << count(rl.requests_remaining) << " of "
                  << count(rl.requests_limit) << " left, tokens " << count(rl.tokens_remaining)
                  << " of " << count(rl.tokens_limit) << " left\n";
    }
    if (json) {
        std::string object = nous::llm::to_json(message);
        if (request.prices)  // null when the table does not price the model
            object.insert(1,
                          "\"cost_usd\":" +
                              (message.cost ? nous::http::to_json(rapidjson::Value(*message.cost))
                                            : std::string("null")) +
                              ",");
        if (routed)  // the deployment that answered, first
            object.insert(1, "\"deployment\":" +
                                 nous::http::to_json(rapidjson::Value(rapidjson::StringRef(
                                     route.deployment.data(), route.deployment.size()))) +
                                 ",");
        write_out(stdout, object + "\n");
    } else if (partial) {
        // The last line is the whole value (a whole response has had no deltas).
        if (message.parsed && message.parsed->to_json() != last_partial)
            write_out(stdout, message.parsed->to_json() + "\n");
    } else {
        write_out(stdout, "\n");
    }
    if (message.output_error) {
        std::cerr << "nouscli: " << message.output_error->message << "\n";
        return output_error;
    }
    if (message.stream_error) {
        std::cerr << "nouscli: error in the stream: " << *message.stream_error << "\n";
        return stream_error;
    }
    return ok;
}

}  // namespace

int cmd_chat(int argc, char** argv) { return chat_or_count(argc, argv, false); }
int cmd_count_tokens(int argc, char** argv) { return chat_or_count(argc, argv, true); }

}  // namespace nouscli
