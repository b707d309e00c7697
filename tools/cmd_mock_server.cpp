// nouscli mock-server: the built-in mock LLM server on a port, until SIGINT or SIGTERM.

#include <csignal>
#include <iostream>

#include "cli.hpp"
#include "nous/mock/mock_server.hpp"

namespace nouscli {

using nous::http::MockServer;
using nous::http::MockServerOptions;

int cmd_mock_server(int argc, char** argv) {
    po::options_description desc("nouscli mock-server [options]");
    MockServerOptions o;
    int port = 8080;
    long long first_token_ms = 0, max_connections = 1024;
    desc.add_options()("help,h", "show this help")("port", po::value(&port),
                                                   "port (0: ephemeral; printed on start)")(
        "bind", po::value(&o.bind_address), "bind address (default 127.0.0.1)")(
        "nagle", "Nagle on, headers and body in separate writes")(
        "tokens", po::value(&o.stream_tokens), "tokens per completion")(
        "tokens-per-second", po::value(&o.tokens_per_second),
        "stream pacing (0: as fast as possible)")("first-token-ms", po::value(&first_token_ms),
                                                  "latency before the first streamed token")(
        "tool-call", po::value(&o.tool_call),
        "chat replies call this tool (default: only when tools are offered)")(
        "fault", po::value(&o.fault),
        "every request fails as x-mock-fault: NAME would make it (a request's own header wins)")(
        "rpm", po::value(&o.rpm), "requests per minute per key; past it a 429 with retry-after")(
        "tpm", po::value(&o.tpm), "tokens (input and output) per minute per key")(
        "max-connections", po::value(&max_connections),
        "connections served at once (default 1024; past it a 503)")(
        "require-key", po::value(&o.require_key),
        "refuse a model request whose credential is not KEY, with the platform's 401 (Azure: "
        "api-key, or an Entra ID bearer)")(
        "aws-secret", po::value(&o.aws_secret),
        "recompute each Bedrock request's SigV4 signature with this secret access key; a wrong, "
        "stale or missing one gets AWS's 403")(
        "google-key-file", po::value(&o.google_key_file),
        "verify the JWTs POST /token receives with this service account's key; Vertex's routes "
        "then take only a bearer the mock issued")(
        "record", po::value(&o.record_dir),
        "write each chat and embeddings request body to DIR (NNNNNN.KIND.json)");
    po::variables_map vm;
    if (auto end = parse_command("mock-server", argc, argv, desc, vm)) return *end;
    // Every option checked: --tokens -1 streamed for ever, a NaN rate never paced.
    if (port < 0 || port > 65535) return usage_error("mock-server", "bad --port");
    if (o.stream_tokens < 0) return usage_error("mock-server", "--tokens must be 0 or more");
    if (!(o.tokens_per_second >= 0) || o.tokens_per_second > 1e9)
        return usage_error("mock-server", "--tokens-per-second must be between 0 and 1e9");
    if (first_token_ms < 0 || first_token_ms > 86400000LL)
        return usage_error("mock-server", "--first-token-ms must be between 0 and 86400000");
    if (o.rpm < 0 || o.tpm < 0)
        return usage_error("mock-server", "--rpm and --tpm must be 0 or more");
    if (max_connections < 1 || max_connections > 1'000'000)
        return usage_error("mock-server", "--max-connections must be between 1 and 1000000");
    o.max_connections = static_cast<std::size_t>(max_connections);
    o.port = static_cast<std::uint16_t>(port);
    o.nagle = vm.count("nagle") > 0;
    o.first_token_latency = std::chrono::milliseconds(first_token_ms);
    MockServer server(o);
    try {
        server.start();
    } catch (const std::invalid_argument& e) {  // --fault NAME it does not know
        return usage_error("mock-server", e.what());
    } catch (const std::exception& e) {
        std::cerr << "nouscli: " << e.what() << "\n";
        return connection;
    }
    std::cout << "mock server listening on " << server.base_url() << std::endl;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
    return ok;
}

}  // namespace nouscli
