// nouscli's shared pieces (tools/cli.hpp).

#include "cli.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "nous/http/log.hpp"

namespace nouscli {

using namespace nous::http;

int exit_code_for(const Error& e) {
    switch (e.code) {
        case ErrorCode::invalid_argument:
            return usage;
        case ErrorCode::dns_failed:
        case ErrorCode::connect_failed:
        case ErrorCode::connection_closed:
        case ErrorCode::tls_failed:
        case ErrorCode::truncated:
        case ErrorCode::protocol:
        case ErrorCode::too_large:
        case ErrorCode::backend_unavailable:
        case ErrorCode::cancelled:
            return connection;
        case ErrorCode::timeout_connect:
        case ErrorCode::timeout_read:
        case ErrorCode::timeout_total:
        case ErrorCode::pool_timeout:
            return timeout;
        case ErrorCode::http_status:
            return e.status >= 400 ? http_error : ok;
        case ErrorCode::backpressure_overflow:
        case ErrorCode::buffer_overflow:
        case ErrorCode::saturated:
        case ErrorCode::malformed_stream:
            return stream_error;
    }
    return connection;
}

int usage_error(std::string_view command, const std::string& message) {
    std::cerr << "nouscli: " << message << "\n(see nouscli " << command << " --help)\n";
    return usage;
}

int report_error(const Error& e) {
    std::cerr << "nouscli: " << to_string(e.code) << ": " << e.message << "\n";
    return exit_code_for(e);
}

int report_provider_error(const Error& e, bool verbose) {
    if (verbose && !e.request_id.empty()) std::cerr << "* request id " << e.request_id << "\n";
    if (e.code != ErrorCode::http_status) return report_error(e);
    std::cerr << "nouscli: " << e.message
              << (e.quota_exhausted ? " (quota exhausted: not retried)" : "") << "\n";
    return exit_code_for(e);
}

/// Writes all of `data`; false when stdout is closed (EPIPE): the caller exits 0 quietly.
bool write_out(std::FILE* out, std::string_view data) {
    if (!data.empty() && std::fwrite(data.data(), 1, data.size(), out) != data.size()) return false;
    return std::fflush(out) == 0;
}

void print_head(int status, const Headers& headers, const std::string& version) {
    std::cerr << (version.empty() ? "HTTP/1.1" : version) << " " << status << "\r\n";
    for (const auto& [k, v] : headers) std::cerr << k << ": " << v << "\r\n";
    std::cerr << "\r\n";
}

void print_request(const std::string& url, const Headers& headers, const std::string& body_line) {
    std::cerr << "> POST " << redact_url(url) << "\n";
    for (const auto& [k, v] : headers) std::cerr << "> " << redact_header(k, v) << "\n";
    std::cerr << "> " << body_line << "\n";
}

bool read_data_argument(const std::string& arg, std::string& body, std::string& error) {
    if (arg.empty() || arg[0] != '@') {
        body = arg;
        return true;
    }
    std::string path = arg.substr(1);
    if (path == "-") {
        body.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        return true;
    }
    // A directory opens as an ifstream and then throws from the read
    // (EISDIR): every failure to read is a usage error, never an abort.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        error = "cannot read " + path + ": is a directory";
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot read " + path + ": " + std::strerror(errno);
        return false;
    }
    try {
        body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception& e) {
        error = "cannot read " + path + ": " + e.what();
        return false;
    }
    if (in.bad()) {
        error = "cannot read " + path;
        return false;
    }
    return true;
}

void ConnectionOptions::add_to(po::options_description& desc) {
    desc.add_options()("header,H", po::value(&header_args_)->composing(),
                       "extra request header 'K: V' (repeatable)")(
        "connect-timeout-ms", po::value(&connect_ms_), "connect timeout (resolution, TCP, TLS)")(
        "timeout-ms", po::value(&timeout_ms_),
        "idle read timeout, waiting for the headers included")(
        "retry", po::value(&retry_), "retries on connect failures and 408/409/429/5xx (default 0)")(
        "verbose,v",
        "the request (secrets redacted) and the response's timings and headers to stderr")(
        "insecure", "do not verify the server certificate")(
        "cacert", po::value(&cacert_), "trust this CA (PEM) besides the system store");
}

void ConnectionOptions::take_flags(const po::variables_map& vm) {
    verbose_ = vm.count("verbose") > 0;
    insecure_ = vm.count("insecure") > 0;
    connect_given_ = vm.count("connect-timeout-ms") > 0;
    timeout_given_ = vm.count("timeout-ms") > 0;
}

bool ConnectionOptions::parse(Headers& headers, std::string& error) const {
    if (retry_ < 0) {
        error = "--retry must be >= 0";
        return false;
    }
    // Any size is taken (a huge one means no timeout); a negative one is a mistake.
    if ((connect_given_ && connect_ms_ < 0) || (timeout_given_ && timeout_ms_ < 0)) {
        error = "--connect-timeout-ms and --timeout-ms must be 0 or more";
        return false;
    }
    // -H 'K: V': a malformed or unsafe one exits 2 before any connection is opened.
    for (const auto& h : header_args_) {
        auto colon = h.find(':');
        if (colon == std::string::npos || colon == 0) {
            error = "bad header '" + h + "' (expected 'K: V')";
            return false;
        }
        std::string name = h.substr(0, colon);
        std::string value = h.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
        headers.emplace_back(std::move(name), std::move(value));
    }
    if (auto e = validate_headers(headers)) {
        error = e->message;
        return false;
    }
    return true;
}

void ConnectionOptions::apply(Options& options) const {
    options.max_retries = retry_;
    if (connect_ms_ >= 0) options.connect_timeout = std::chrono::milliseconds(connect_ms_);
    if (timeout_ms_ >= 0) options.read_timeout = std::chrono::milliseconds(timeout_ms_);
    options.insecure = insecure_;
    options.ca_file = cacert_;
}

void ConnectionOptions::set_log_level() const {
    if (!verbose_ && !std::getenv("NOUS_LOG_LEVEL")) nous::http::set_log_level(LogLevel::error);
}

namespace {

/// Parses `desc` and, when `name` is given, `count` positional arguments
/// (-1: any number) stored by `hidden`'s `name` option.
std::optional<int> parse_with(std::string_view command, int argc, char** argv,
                              const po::options_description& desc, po::variables_map& vm,
                              const char* name, const po::value_semantic* value, int count) {
    po::options_description all;
    all.add(desc);
    po::positional_options_description positional;
    po::command_line_parser parser(argc, argv);
    if (name != nullptr) {
        po::options_description hidden;
        hidden.add_options()(name, value);
        all.add(hidden);
        positional.add(name, count);
        parser.positional(positional);
    }
    try {
        po::store(parser.options(all).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        return usage_error(command, e.what());
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return ok;
    }
    return std::nullopt;
}

}  // namespace

std::optional<int> parse_command(std::string_view command, int argc, char** argv,
                                 const po::options_description& desc, po::variables_map& vm,
                                 const char* name, std::string* positional_value) {
    return parse_with(command, argc, argv, desc, vm, name,
                      name ? po::value(positional_value) : nullptr, 1);
}

std::optional<int> parse_command(std::string_view command, int argc, char** argv,
                                 const po::options_description& desc, po::variables_map& vm,
                                 const char* name, std::vector<std::string>* positional_values) {
    return parse_with(command, argc, argv, desc, vm, name, po::value(positional_values), -1);
}

bool credential_from_env(nous::llm::Provider provider, std::string& api_key_env, std::string& key,
                         std::string& error) {
    const bool named = !api_key_env.empty();
    if (!named) api_key_env = nous::llm::default_api_key_env(provider);
    if (const char* value = std::getenv(api_key_env.c_str()); value && *value) {
        key = value;
        return true;
    }
    if ((provider == nous::llm::Provider::bedrock || provider == nous::llm::Provider::vertex ||
         provider == nous::llm::Provider::vertex_anthropic) &&
        !named) {
        key.clear();  // SigV4: the library finds the AWS credentials, and names them if it finds
                      // none
        return true;
    }
    const bool azure =
        provider == nous::llm::Provider::azure || provider == nous::llm::Provider::azure_responses;
    if (azure && !named) {
        if (const char* token = std::getenv("AZURE_OPENAI_AD_TOKEN"); token && *token) {
            key.clear();  // the Entra ID token: sent as a bearer by the library
            return true;
        }
        error = api_key_env +
                " and AZURE_OPENAI_AD_TOKEN are not set (the API key, or an Entra ID "
                "token; see --api-key-env)";
        return false;
    }
    error = api_key_env + " is not set (the API key; see --api-key-env)";
    return false;
}

}  // namespace nouscli
