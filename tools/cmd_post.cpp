// nouscli post: one POST, its body byte-exact to stdout, or a stream printed
// as it arrives (data, jsonl or raw) with a stdout that accepts nothing bounded
// like a parked window.

#include <poll.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <iostream>

#include "cli.hpp"
#include "nous/http/stream.hpp"

namespace nouscli {

using namespace nous::http;

namespace {

/// Stream output that gives up when the reader stops reading: `--max-wait-ms`
/// bounds a stdout that accepts nothing, as it bounds a parked window.
class BoundedWriter {
  public:
    enum class Result { ok, closed, stalled };

    BoundedWriter(std::FILE* out, std::chrono::milliseconds max_wait)
        : fd_(fileno(out)), max_wait_(max_wait) {
        std::fflush(out);
        struct stat st {};
        // On a pipe or socket, POLLOUT promises room for PIPE_BUF bytes only:
        // larger writes could block past the bound.
        if (fstat(fd_, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
            piece_ = PIPE_BUF;
    }

    Result write(std::string_view data) {
        while (!data.empty()) {
            pollfd p{fd_, POLLOUT, 0};
            const int rc =
                ::poll(&p, 1, static_cast<int>(std::min<long long>(max_wait_.count(), 1 << 30)));
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
int run_stream(const std::string& url, const std::string& body, const Headers& headers,
               const Options& options, const std::string& format, std::FILE* out, bool include) {
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
            return report_error(e);
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
            std::cerr << "nouscli: backpressure_overflow: output accepted nothing for "
                      << max_wait.count() << " ms\n";
            return stream_error;
        }
    }
    return ok;
}

}  // namespace

int cmd_post(int argc, char** argv) {
    po::options_description desc("nouscli post URL [options]");
    std::string data, format = "data", backend, stream_backend, output;
    long long max_wait_ms = -1;
    ConnectionOptions connection;
    desc.add_options()("help,h", "show this help")(
        "data,d", po::value(&data), "request body; @FILE reads a file, @- reads stdin")(
        "stream", "read the response as a stream and print items as they arrive")(
        "format", po::value(&format), "with --stream: data|jsonl|raw")(
        "backend", po::value(&backend), "post backend (pooled, curl, or a registered name)")(
        "stream-backend", po::value(&stream_backend), "stream backend (window, pull)")(
        "max-wait-ms", po::value(&max_wait_ms), "backpressure max park (streams)")(
        "output,o", po::value(&output), "write the body to FILE")(
        "include,i", "status line and headers to stderr");
    connection.add_to(desc);
    std::string url;
    po::variables_map vm;
    if (auto end = parse_command("post", argc, argv, desc, vm, "url", &url)) return *end;
    connection.take_flags(vm);
    if (url.empty()) return usage_error("post", "post needs a URL");
    const bool streaming = vm.count("stream") > 0;
    if (format != "data" && format != "jsonl" && format != "raw")
        return usage_error("post", "--format must be data, jsonl or raw");

    Headers headers;
    std::string bad;
    if (!connection.parse(headers, bad)) return usage_error("post", bad);
    if (auto e = validate_url(url)) return usage_error("post", e->message);

    std::string body;
    if (vm.count("data")) {
        std::string error;
        if (!read_data_argument(data, body, error)) return usage_error("post", error);
    }

    Options options;
    connection.apply(options);
    options.backend = backend;
    options.stream_backend = stream_backend;
    if (format == "raw") options.stream_format = StreamFormat::raw;
    if (vm.count("max-wait-ms") && max_wait_ms < 0)
        return usage_error("post", "--max-wait-ms must be 0 or more");
    if (max_wait_ms >= 0) options.window_max_park = std::chrono::milliseconds(max_wait_ms);
    const bool verbose = connection.verbose();
    const bool include = vm.count("include") > 0;
    connection.set_log_level();
    if (verbose) print_request(url, headers, "(" + std::to_string(body.size()) + " body bytes)");

    std::FILE* out = stdout;
    if (!output.empty()) {
        out = std::fopen(output.c_str(), "wb");
        if (!out) return usage_error("post", "cannot write " + output);
    }
    if (streaming) return run_stream(url, body, headers, options, format, out, include || verbose);
    auto result = post(url, body, headers, options);
    if (result.ok()) {
        const Response& r = result.value();
        if (verbose) {
            auto ms = [](std::chrono::microseconds us) {
                return std::to_string(us.count() / 1000.0) + " ms";
            };
            std::cerr << "* " << r.http_version
                      << (r.connection_reused ? " (reused connection)" : "") << " resolve "
                      << ms(r.timings.resolve) << ", connect " << ms(r.timings.connect) << ", tls "
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
    return report_error(e);
}

}  // namespace nouscli
