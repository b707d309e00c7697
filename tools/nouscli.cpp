// nouscli: the command-line face of nous-http. Interface and exit codes are a
// contract (docs/design/nouscli.md): tests outside the project use them.
// Public API only, like any application.

#include <boost/program_options.hpp>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nous/http/client.hpp"
#include "nous/http/log.hpp"
#include "nous/mock/mock_server.hpp"
#include "nous/http/stream.hpp"
#include "nous/llm/chat.hpp"

namespace po = boost::program_options;
using namespace nous::http;

namespace {

enum Exit { ok = 0, usage = 2, connection = 3, timeout = 4, http_error = 5, stream_error = 6 };

int exit_code_for(const Error& e) {
    switch (e.code) {
        case ErrorCode::invalid_argument: return usage;
        case ErrorCode::dns_failed:
        case ErrorCode::connect_failed:
        case ErrorCode::connection_closed:
        case ErrorCode::tls_failed:
        case ErrorCode::truncated:
        case ErrorCode::protocol:
        case ErrorCode::too_large:
        case ErrorCode::backend_unavailable:
        case ErrorCode::cancelled: return connection;
        case ErrorCode::timeout_connect:
        case ErrorCode::timeout_read:
        case ErrorCode::timeout_total:
        case ErrorCode::pool_timeout: return timeout;
        case ErrorCode::http_status: return e.status >= 400 ? http_error : ok;
        case ErrorCode::backpressure_overflow:
        case ErrorCode::buffer_overflow:
        case ErrorCode::saturated:
        case ErrorCode::malformed_stream: return stream_error;
    }
    return connection;
}

int usage_error(const std::string& message) {
    std::cerr << "nouscli: " << message << "\n(see nouscli post --help)\n";
    return usage;
}

/// Writes all of `data`; false when stdout is closed (EPIPE): the caller exits 0 quietly.
bool write_out(std::FILE* out, std::string_view data) {
    if (!data.empty() && std::fwrite(data.data(), 1, data.size(), out) != data.size()) return false;
    return std::fflush(out) == 0;
}

/// Stream output that gives up when the reader stops reading: `--max-wait-ms`
/// bounds a stdout that accepts nothing, as it bounds a parked window.
class BoundedWriter {
public:
    enum class Result { ok, closed, stalled };

    BoundedWriter(std::FILE* out, std::chrono::milliseconds max_wait) : fd_(fileno(out)), max_wait_(max_wait) {
        std::fflush(out);
        struct stat st {};
        // On a pipe or socket, POLLOUT promises room for PIPE_BUF bytes only:
        // larger writes could block past the bound.
        if (fstat(fd_, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) piece_ = PIPE_BUF;
    }

    Result write(std::string_view data) {
        while (!data.empty()) {
            pollfd p{fd_, POLLOUT, 0};
            const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(max_wait_.count(), 1 << 30)));
            if (rc < 0) {
                if (errno == EINTR) continue;
                return Result::closed;
            }
            if (rc == 0) return Result::stalled;
            const ssize_t n = ::write(fd_, data.data(), std::min(data.size(), piece_));
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) continue;
                return Result::closed;  // EPIPE: the reader is gone
            }
            data.remove_prefix(static_cast<std::size_t>(n));
        }
        return Result::ok;
    }

private:
    int fd_;
    std::chrono::milliseconds max_wait_;
    std::size_t piece_ = std::size_t(1) << 30;
};

void print_head(int status, const Headers& headers, const std::string& version) {
    std::cerr << (version.empty() ? "HTTP/1.1" : version) << " " << status << "\r\n";
    for (const auto& [k, v] : headers) std::cerr << k << ": " << v << "\r\n";
    std::cerr << "\r\n";
}

/// -H 'K: V' arguments; false with `error` set for a malformed or unsafe one
/// (a bad header exits 2 before any connection is opened).
bool parse_header_args(const std::vector<std::string>& args, Headers& headers, std::string& error) {
    for (const auto& h : args) {
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

std::string jsonl_line(const Event& e) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("event");
    w.String(e.type.data(), static_cast<rapidjson::SizeType>(e.type.size()));
    w.Key("data");
    w.String(e.data.data(), static_cast<rapidjson::SizeType>(e.data.size()));
    w.Key("id");
    w.String(e.id.data(), static_cast<rapidjson::SizeType>(e.id.size()));
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

/// Prints items as they arrive, flushed per item. stdout is blocking: a reader
/// that stops reading stalls this loop and, through the window, the socket.
int run_stream(const std::string& url, const std::string& body, const Headers& headers, const Options& options,
               const std::string& format, std::FILE* out, bool include) {
    Stream s = stream(url, body, headers, options);
    const auto max_wait = options.window_max_park.value_or(defaults::window_max_park);
    BoundedWriter writer(out, max_wait);
    bool head_printed = false;
    while (auto item = s.next()) {
        if (include && !head_printed && s.stats().status != 0) {
            head_printed = true;
            print_head(s.stats().status, s.response_headers(), "HTTP/1.1");
        }
        if (item->is_done()) return ok;  // [DONE] ends it at once, even on an open connection
        if (item->is_error()) {
            const Error& e = *item->error;
            if (e.code == ErrorCode::http_status) {
                if (include) print_head(e.status, e.headers, "HTTP/1.1");
                writer.write(e.body);  // the error body, raw
                return exit_code_for(e);
            }
            std::cerr << "nouscli: " << to_string(e.code) << ": " << e.message << "\n";
            return exit_code_for(e);
        }
        const Event& e = item->event;
        const auto written = format == "jsonl" ? writer.write(jsonl_line(e))
                             : format == "raw" ? writer.write(e.data)
                                               : writer.write(e.data + "\n");
        if (written == BoundedWriter::Result::closed) {
            s.cancel();  // closed stdout: stop the request, quietly
            return ok;
        }
        if (written == BoundedWriter::Result::stalled) {
            s.cancel();
            std::cerr << "nouscli: backpressure_overflow: output accepted nothing for " << max_wait.count()
                      << " ms\n";
            return stream_error;
        }
    }
    return ok;
}

/// Parses `desc` into `vm`, with one positional argument (before or after
/// the options) when `name` is given; an exit code when the command ends
/// here (a usage error, or --help printed).
std::optional<int> parse_command(int argc, char** argv, const po::options_description& desc, po::variables_map& vm,
                                 const char* name = nullptr, std::string* positional_value = nullptr) {
    po::options_description all;
    all.add(desc);
    po::positional_options_description positional;
    po::command_line_parser parser(argc, argv);
    if (name != nullptr) {
        po::options_description hidden;
        hidden.add_options()(name, po::value(positional_value));
        all.add(hidden);
        positional.add(name, 1);
        parser.positional(positional);
    }
    try {
        po::store(parser.options(all).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        return usage_error(e.what());
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return ok;
    }
    return std::nullopt;
}

int cmd_post(int argc, char** argv) {
    po::options_description desc("nouscli post URL [options]");
    std::vector<std::string> header_args;
    std::string data, format = "data", backend, stream_backend, output, cacert;
    long long connect_ms = -1, timeout_ms = -1, max_wait_ms = -1;
    int retry = 0;
    desc.add_options()
        ("help,h", "show this help")
        ("data,d", po::value(&data), "request body; @FILE reads a file, @- reads stdin")
        ("header,H", po::value(&header_args)->composing(), "extra request header 'K: V' (repeatable)")
        ("stream", "read the response as a stream and print items as they arrive")
        ("format", po::value(&format), "with --stream: data|jsonl|raw")
        ("backend", po::value(&backend), "post backend (pooled, curl, or a registered name)")
        ("stream-backend", po::value(&stream_backend), "stream backend (window, pull)")
        ("connect-timeout-ms", po::value(&connect_ms), "connect timeout (resolution, TCP, TLS)")
        ("timeout-ms", po::value(&timeout_ms), "idle read timeout, waiting for the headers included")
        ("max-wait-ms", po::value(&max_wait_ms), "backpressure max park (streams)")
        ("retry", po::value(&retry), "retries on connect failures and 408/409/429/5xx (default 0)")
        ("output,o", po::value(&output), "write the body to FILE")
        ("include,i", "status line and headers to stderr")
        ("verbose,v", "timings and request headers (secrets redacted) to stderr")
        ("insecure", "do not verify the server certificate")
        ("cacert", po::value(&cacert), "trust this CA (PEM) besides the system store");
    std::string url;
    po::variables_map vm;
    if (auto end = parse_command(argc, argv, desc, vm, "url", &url)) return *end;
    if (url.empty()) return usage_error("post needs a URL");
    const bool streaming = vm.count("stream") > 0;
    if (format != "data" && format != "jsonl" && format != "raw")
        return usage_error("--format must be data, jsonl or raw");
    if (retry < 0) return usage_error("--retry must be >= 0");

    Headers headers;
    std::string bad;
    if (!parse_header_args(header_args, headers, bad)) return usage_error(bad);
    if (auto e = validate_url(url)) return usage_error(e->message);

    std::string body;
    if (vm.count("data")) {
        std::string error;
        if (!read_data_argument(data, body, error)) return usage_error(error);
    }

    Options options;
    options.backend = backend;
    options.max_retries = retry;
    options.stream_backend = stream_backend;
    if (format == "raw") options.stream_format = StreamFormat::raw;
    if (max_wait_ms >= 0) options.window_max_park = std::chrono::milliseconds(max_wait_ms);
    if (connect_ms >= 0) options.connect_timeout = std::chrono::milliseconds(connect_ms);
    if (timeout_ms >= 0) options.read_timeout = std::chrono::milliseconds(timeout_ms);
    options.insecure = vm.count("insecure") > 0;
    options.ca_file = cacert;
    const bool verbose = vm.count("verbose") > 0;
    const bool include = vm.count("include") > 0;
    // The tool reports errors itself; library warnings only with -v or NOUS_LOG_LEVEL.
    if (!verbose && !std::getenv("NOUS_LOG_LEVEL")) set_log_level(LogLevel::error);

    if (verbose) {
        std::cerr << "> POST " << redact_url(url) << "\n";
        for (const auto& [k, v] : headers)
            std::cerr << "> " << redact_header(k, v) << "\n";
        std::cerr << "> (" << body.size() << " body bytes)\n";
    }

    std::FILE* out = stdout;
    if (!output.empty()) {
        out = std::fopen(output.c_str(), "wb");
        if (!out) return usage_error("cannot write " + output);
    }
    if (streaming) return run_stream(url, body, headers, options, format, out, include || verbose);
    auto result = post(url, body, headers, options);
    if (result.ok()) {
        const Response& r = result.value();
        if (verbose) {
            auto ms = [](std::chrono::microseconds us) { return std::to_string(us.count() / 1000.0) + " ms"; };
            std::cerr << "* " << r.http_version << (r.connection_reused ? " (reused connection)" : "")
                      << " resolve " << ms(r.timings.resolve) << ", connect " << ms(r.timings.connect) << ", tls "
                      << ms(r.timings.tls) << ", first byte " << ms(r.timings.ttfb) << ", total "
                      << ms(r.timings.total) << "\n";
        }
        if (include || verbose) print_head(r.status, r.headers, r.http_version);
        if (!write_out(out, r.body)) return ok;  // closed stdout: quiet
        return ok;
    }
    const Error& e = result.error();
    if (e.code == ErrorCode::http_status) {
        if (include || verbose) print_head(e.status, e.headers, "HTTP/1.1");
        write_out(out, e.body);
        return exit_code_for(e);
    }
    std::cerr << "nouscli: " << to_string(e.code) << ": " << e.message << "\n";
    return exit_code_for(e);
}


int cmd_chat(int argc, char** argv) {
    po::options_description desc("nouscli chat PROMPT [options]  (PROMPT \"-\" reads stdin)");
    std::vector<std::string> header_args;
    std::string provider_name = "openai", base_url, model, system, api_key_env, cacert;
    long long connect_ms = -1, timeout_ms = -1;
    int max_tokens = -1, retry = 0;
    desc.add_options()
        ("help,h", "show this help")
        ("provider", po::value(&provider_name), "openai|anthropic|gemini (default openai)")
        ("base-url", po::value(&base_url), "API base URL (default: the provider's)")
        ("model", po::value(&model), "model name (required)")
        ("system", po::value(&system), "system prompt")
        ("max-tokens", po::value(&max_tokens), "maximum output tokens (anthropic: 1024 unless given)")
        ("no-stream", "one non-streaming request")
        ("json", "print the final message as one JSON object instead of the text")
        ("api-key-env", po::value(&api_key_env), "variable holding the key (default by provider)")
        ("header,H", po::value(&header_args)->composing(), "extra request header 'K: V' (repeatable)")
        ("connect-timeout-ms", po::value(&connect_ms), "connect timeout (resolution, TCP, TLS)")
        ("timeout-ms", po::value(&timeout_ms), "idle read timeout, waiting for the headers included")
        ("retry", po::value(&retry), "retries on connect failures and 408/409/429/5xx (default 0)")
        ("verbose,v", "the request (secrets redacted) to stderr")
        ("insecure", "do not verify the server certificate")
        ("cacert", po::value(&cacert), "trust this CA (PEM) besides the system store");
    std::string prompt;
    po::variables_map vm;
    if (auto end = parse_command(argc, argv, desc, vm, "prompt", &prompt)) return *end;
    auto provider = nous::llm::provider_from_name(provider_name);
    if (!provider) return usage_error("--provider must be openai, anthropic or gemini");
    if (!vm.count("prompt")) return usage_error("chat needs a PROMPT (\"-\" reads stdin)");
    if (model.empty()) return usage_error("chat needs --model");
    if (retry < 0) return usage_error("--retry must be >= 0");
    if (prompt == "-") prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (api_key_env.empty())
        api_key_env = *provider == nous::llm::Provider::openai      ? "OPENAI_API_KEY"
                      : *provider == nous::llm::Provider::anthropic ? "ANTHROPIC_API_KEY"
                                                                    : "GEMINI_API_KEY";
    const char* key = std::getenv(api_key_env.c_str());
    // A missing key exits 2 before any connection.
    if (!key || !*key) return usage_error(api_key_env + " is not set (the API key; see --api-key-env)");

    nous::llm::ChatRequest request;
    request.provider = *provider;
    request.base_url = base_url;
    request.api_key = key;
    request.model = model;
    request.system = system;
    request.messages.push_back({"user", prompt});
    if (max_tokens > 0) request.max_tokens = max_tokens;
    request.stream = vm.count("no-stream") == 0;
    std::string bad;
    if (!parse_header_args(header_args, request.headers, bad)) return usage_error(bad);
    // Built here too for the checks and -v; run_chat builds the same call.
    auto call = nous::llm::build_chat_call(request);
    if (!call) return usage_error(call.error().message);
    if (auto e = validate_url(call->url)) return usage_error(e->message);

    Options options;
    options.max_retries = retry;
    if (connect_ms >= 0) options.connect_timeout = std::chrono::milliseconds(connect_ms);
    if (timeout_ms >= 0) options.read_timeout = std::chrono::milliseconds(timeout_ms);
    options.insecure = vm.count("insecure") > 0;
    options.ca_file = cacert;
    const bool verbose = vm.count("verbose") > 0;
    const bool json = vm.count("json") > 0;
    if (!verbose && !std::getenv("NOUS_LOG_LEVEL")) set_log_level(LogLevel::error);
    if (verbose) {
        std::cerr << "> POST " << redact_url(call->url) << "\n";
        for (const auto& [k, v] : call->headers) std::cerr << "> " << redact_header(k, v) << "\n";
        std::cerr << "> " << call->body << "\n";
    }

    // Text printed as it arrives, flushed per delta (unless --json); a closed
    // stdout stops the stream at once.
    bool printed_any = false;
    bool stdout_closed = false;
    auto result = nous::llm::run_chat(request, options, [&](const nous::llm::Delta& d) {
        if (json || d.text.empty()) return true;
        printed_any = true;
        stdout_closed = !write_out(stdout, d.text);
        return !stdout_closed;
    });
    if (stdout_closed) return ok;
    if (!result) {
        const Error& e = result.error();
        if (printed_any) write_out(stdout, "\n");
        if (e.code == ErrorCode::http_status) {
            std::cerr << "nouscli: " << e.message << "\n";
            return exit_code_for(e);
        }
        std::cerr << "nouscli: " << to_string(e.code) << ": " << e.message << "\n";
        return exit_code_for(e);
    }
    const nous::llm::ChatResult& message = result.value();
    if (json)
        write_out(stdout, nous::llm::to_json(message) + "\n");
    else
        write_out(stdout, "\n");
    if (message.stream_error) {
        std::cerr << "nouscli: error in the stream: " << *message.stream_error << "\n";
        return stream_error;
    }
    return ok;
}

int cmd_mock_server(int argc, char** argv) {
    po::options_description desc("nouscli mock-server [options]");
    MockServerOptions o;
    int port = 8080;
    long long first_token_ms = 0;
    desc.add_options()
        ("help,h", "show this help")
        ("port", po::value(&port), "port (0: ephemeral; printed on start)")
        ("bind", po::value(&o.bind_address), "bind address (default 127.0.0.1)")
        ("nagle", "Nagle on, headers and body in separate writes")
        ("tokens", po::value(&o.stream_tokens), "tokens per completion")
        ("tokens-per-second", po::value(&o.tokens_per_second), "stream pacing (0: as fast as possible)")
        ("first-token-ms", po::value(&first_token_ms), "latency before the first streamed token")
        ("tool-call", po::value(&o.tool_call), "chat replies call this tool (default: only when tools are offered)");
    po::variables_map vm;
    if (auto end = parse_command(argc, argv, desc, vm)) return *end;
    if (port < 0 || port > 65535) return usage_error("bad --port");
    o.port = static_cast<std::uint16_t>(port);
    o.nagle = vm.count("nagle") > 0;
    o.first_token_latency = std::chrono::milliseconds(first_token_ms);
    MockServer server(o);
    try {
        server.start();
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

}  // namespace

int main(int argc, char** argv) {
    // A closed stdout must not kill us: writes fail with EPIPE instead.
    std::signal(SIGPIPE, SIG_IGN);
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        std::cout << "usage: nouscli post URL [options]\n       nouscli chat PROMPT --model NAME [options]\n"
                     "       nouscli mock-server [--port N] [options]\n";
        return argc < 2 ? usage : ok;
    }
    std::string command = argv[1];
    if (command == "post") return cmd_post(argc - 1, argv + 1);
    if (command == "chat") return cmd_chat(argc - 1, argv + 1);
    if (command == "mock-server") return cmd_mock_server(argc - 1, argv + 1);
    return usage_error("unknown command '" + command + "'");
}
