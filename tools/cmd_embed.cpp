// nouscli embed: texts into one embeddings matrix through the provider
// helpers (nous/llm/embed.hpp), written as JSON lines, raw float32 or .npy.

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "cli.hpp"
#include "embedding_output.hpp"
#include "nous/llm/embed.hpp"
#include "nous/llm/result.hpp"
#include "otlp_export.hpp"

namespace nouscli {

using namespace nous::http;

namespace {

/// --input's text, one input per line (a final newline ends the last one;
/// CRLF line ends are taken).
void add_lines(const std::string& text, std::vector<std::string>& inputs) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        inputs.push_back(std::move(line));
        start = end + 1;
    }
}

}  // namespace

int cmd_embed(int argc, char** argv) {
    po::options_description desc("nouscli embed [TEXT...] --model NAME [options]");
    std::string provider_name = "openai", base_url, model, api_key_env, input_file, format_name,
                output_file;
    std::string api_version;
    long long dimensions = 0, batch = 0, concurrency = 4;
    ConnectionOptions connection;
    desc.add_options()("help,h", "show this help")(
        "provider", po::value(&provider_name),
        "openai|gemini|azure (default openai, and the servers that speak its /embeddings)")(
        "api-version", po::value(&api_version), "azure: api-version=V on the query")(
        "base-url", po::value(&base_url), "API base URL (default: the provider's)")(
        "model", po::value(&model), "model name (required)")(
        "api-key-env", po::value(&api_key_env), "variable holding the key (default by provider)")(
        "input", po::value(&input_file),
        "more inputs, one per line, after any TEXT (\"-\": stdin)")(
        "dimensions", po::value(&dimensions), "values per vector (default: the model's)")(
        "batch", po::value(&batch), "inputs per request (default 2048 openai, 100 gemini)")(
        "concurrency", po::value(&concurrency), "requests in flight (default 4)")(
        "float", "ask for encoding_format \"float\" (openai; default base64)")(
        "format", po::value(&format_name),
        "jsonl (default): {\"index\",\"embedding\"} per line; f32: raw little-endian float32; "
        "npy: NumPy .npy")("output,o", po::value(&output_file), "write to FILE instead of stdout")(
        "otlp",
        "export the call's span and metrics by OTLP/HTTP JSON to the OTEL_EXPORTER_OTLP_* endpoint "
        "before exiting (flushed, bounded by OTEL_EXPORTER_OTLP_TIMEOUT)");
    connection.add_to(desc);
    std::vector<std::string> texts;
    po::variables_map vm;
    if (auto end = parse_command("embed", argc, argv, desc, vm, "text", &texts)) return *end;
    connection.take_flags(vm);
    auto provider = nous::llm::provider_from_name(provider_name);
    if (!provider || *provider == nous::llm::Provider::anthropic)
        return usage_error("embed", provider_name == "anthropic"
                                        ? "anthropic has no embeddings API"
                                        : "--provider must be openai, gemini or azure");
    if (model.empty()) return usage_error("embed", "embed needs --model");
    auto output = embedding_output_named(format_name.empty() ? "jsonl" : format_name);
    if (!output) return usage_error("embed", "--format must be jsonl, f32 or npy");
    if (vm.count("dimensions") && dimensions <= 0)
        return usage_error("embed", "--dimensions must be a positive number");
    if (vm.count("batch") && batch <= 0)
        return usage_error("embed", "--batch must be a positive number");
    if (concurrency <= 0 || concurrency > 1024)
        return usage_error("embed", "--concurrency must be between 1 and 1024");

    nous::llm::EmbedRequest request;
    std::string bad;
    if (!connection.parse(request.headers, bad)) return usage_error("embed", bad);
    request.inputs = std::move(texts);
    if (!input_file.empty()) {
        std::string text;
        if (!read_data_argument("@" + input_file, text, bad))
            return usage_error("embed", "--input: " + bad);
        add_lines(text, request.inputs);
    }
    if (request.inputs.empty())
        return usage_error("embed", "embed needs a TEXT or --input (\"-\" reads stdin)");
    std::string key, missing;
    if (!credential_from_env(*provider, api_key_env, key, missing))
        return usage_error("embed", missing);
    request.provider = *provider;
    request.base_url = base_url;
    request.api_key = key;
    request.api_version = api_version;
    request.model = model;
    if (dimensions > 0)
        request.dimensions = static_cast<int>(std::min<long long>(dimensions, 1 << 30));
    if (batch > 0) request.batch_size = static_cast<std::size_t>(batch);
    request.concurrency = static_cast<std::size_t>(concurrency);
    request.float_encoding = vm.count("float") > 0;

    // --otlp: its variables are checked before any connection.
    OtlpExport otlp;
    if (vm.count("otlp"))
        if (auto bad = otlp.start()) return usage_error("embed", *bad);
    request.observer = otlp.observer();
    std::FILE* out = stdout;
    if (!output_file.empty()) {
        out = std::fopen(output_file.c_str(), "wb");
        if (!out)
            return usage_error("embed",
                               "cannot write " + output_file + ": " + std::strerror(errno));
    }
    Options options;
    connection.apply(options);
    connection.set_log_level();
    auto result = nous::llm::embed(request, options);
    if (!result) {
        if (out != stdout) std::fclose(out);
        return report_provider_error(result.error(), connection.verbose());
    }
    const nous::llm::Embeddings& embeddings = result.value();
    if (connection.verbose())
        for (const auto& b : embeddings.batches) {
            std::cerr << "* inputs " << b.first << "-" << b.first + b.count - 1 << ": request id "
                      << (b.request_id.empty() ? "(none)" : b.request_id);
            if (b.input_tokens) std::cerr << ", " << *b.input_tokens << " input tokens";
            std::cerr << "\n";
        }
    const bool written = write_embeddings(out, embeddings, *output);
    if (out != stdout) {
        if (std::fclose(out) != 0 || !written) {
            std::cerr << "nouscli: cannot write " << output_file << "\n";
            return usage;
        }
    }
    return ok;  // a closed stdout (| head) is a quiet 0
}

}  // namespace nouscli
