// embed(): the request checked, its inputs cut into batches, the batches
// posted (up to `concurrency` at once, each through the retry policy), each
// response decoded into the call's one matrix. docs/embeddings.md.

#include "nous/llm/embed.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "embeddings/body_reader.hpp"
#include "embeddings/embedding_format.hpp"
#include "embeddings/run_embed.hpp"
#include "formats/request_json.hpp"
#include "json/utf8_check.hpp"
#include "nous/http/backend.hpp"
#include "nous/http/stream.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

namespace {

using nous::http::ErrorCode;

Error invalid(std::string message) {
    return Error(ErrorCode::invalid_argument, std::move(message));
}

struct Range {
    std::size_t first = 0, count = 0;
};

/// "input 7" or "inputs 0-2047": how an error names the batch it ended.
std::string range_name(const Range& range) {
    if (range.count == 1) return "input " + std::to_string(range.first);
    return "inputs " + std::to_string(range.first) + "-" +
           std::to_string(range.first + range.count - 1);
}

/// The tokens an input may cost, never fewer than a byte-level BPE (OpenAI's
/// tokenizers) makes of it: ASCII at a token per 3 bytes, and every byte
/// past ASCII a token (a CJK character is 3 bytes and 1 to 3 tokens; bytes
/// / 3 alone undercounts it, and a batch could pass the request's budget).
std::size_t estimated_tokens(std::string_view text) {
    std::size_t ascii = 0, other = 0;
    for (unsigned char c : text) (c < 0x80 ? ascii : other) += 1;
    return ascii / 3 + other + 1;
}

/// The inputs cut into batches of at most `batch_size` inputs and, when the
/// format has a token budget, of at most that many estimated tokens; an
/// input over the budget alone goes in a batch of its own.
std::vector<Range> batches_of(const EmbedRequest& request, std::size_t batch_size,
                              std::size_t token_budget) {
    std::vector<Range> batches;
    Range current;
    std::size_t tokens = 0;
    for (std::size_t i = 0; i < request.inputs.size(); ++i) {
        const std::size_t estimate = estimated_tokens(request.inputs[i]);
        const bool full = current.count == batch_size || (token_budget != 0 && current.count > 0 &&
                                                          tokens + estimate > token_budget);
        if (full) {
            batches.push_back(current);
            current = Range{i, 0};
            tokens = 0;
        }
        ++current.count;
        tokens += estimate;
    }
    if (current.count > 0) batches.push_back(current);
    return batches;
}

std::optional<Error> check(const EmbedRequest& request) {
    if (request.model.empty()) return invalid("an embeddings request needs a model");
    if (request.inputs.empty()) return invalid("an embeddings request needs at least one input");
    for (std::size_t i = 0; i < request.inputs.size(); ++i) {
        if (request.inputs[i].empty())
            return invalid("input " + std::to_string(i) + " is empty (the providers refuse it)");
        // JSON is UTF-8: the provider could not parse the body (a 400 naming nothing).
        if (detail::first_invalid_utf8(request.inputs[i]))
            return invalid("input " + std::to_string(i) + " is not UTF-8: send text as UTF-8");
    }
    if (request.dimensions &&
        (*request.dimensions <= 0 ||
         static_cast<std::size_t>(*request.dimensions) > detail::EmbeddingMatrix::max_dimensions))
        return invalid("dimensions must be between 1 and " +
                       std::to_string(detail::EmbeddingMatrix::max_dimensions));
    if (request.batch_size && *request.batch_size == 0)
        return invalid("batch_size must be at least 1");
    if (request.concurrency == 0) return invalid("concurrency must be at least 1");
    return std::nullopt;
}

/// One call's shared state: the matrix, the batches' outcomes, the first error.
class EmbedCall {
  public:
    EmbedCall(const EmbedRequest& request, const detail::EmbeddingFormat& format,
              const nous::http::Options& options, std::vector<Range> ranges)
        : request_(request),
          format_(format),
          options_(options),
          ranges_(std::move(ranges)),
          matrix_(request.inputs.size(),
                  request.dimensions ? static_cast<std::size_t>(*request.dimensions) : 0),
          batches_(ranges_.size()) {}

    void set_target(std::string url, Headers headers) {
        url_ = std::move(url);
        headers_ = std::move(headers);
    }

    /// Batches taken in turn until none is left or one has failed.
    void work() {
        for (;;) {
            if (failed_.load(std::memory_order_acquire)) return;
            const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
            if (i >= ranges_.size()) return;
            std::optional<Error> error;
            try {
                error = run_batch(i);
            } catch (const std::bad_alloc&) {
                error =
                    Error(ErrorCode::too_large, "no memory for the batch's request or response");
            }
            if (error) {
                error->message = range_name(ranges_[i]) + ": " + error->message;
                std::lock_guard lock(mutex_);
                if (!error_) error_ = std::move(error);
                failed_.store(true, std::memory_order_release);
                return;
            }
        }
    }

    Result<Embeddings> result() {
        if (error_) return *error_;
        Embeddings out;
        out.count = request_.inputs.size();
        out.dimensions = matrix_.dimensions();
        out.values = matrix_.take();
        out.batches = std::move(batches_);
        out.rate_limit = std::move(rate_limit_);
        for (const EmbeddingBatch& batch : out.batches)
            if (batch.input_tokens) {
                if (!out.usage) out.usage = Usage{};
                out.usage->input_tokens += *batch.input_tokens;
            }
        return out;
    }

    std::size_t batches() const noexcept { return ranges_.size(); }

  private:
    std::optional<Error> run_batch(std::size_t i) {
        const Range range = ranges_[i];
        rapidjson::StringBuffer buffer;
        detail::Writer w(buffer);
        format_.write_body(w, request_, range.first, range.count);
        const std::string_view body(buffer.GetString(), buffer.GetSize());
        detail::BatchReading reading{matrix_, range.first, range.count, std::nullopt, {}, {}, {}};
        Received received;
        if (auto error = streamed_ ? receive_streamed(body, reading, received)
                                   : receive_whole(body, reading, received))
            return error;
        EmbeddingBatch& batch = batches_[i];  // each worker writes only its own
        batch.first = range.first;
        batch.count = range.count;
        batch.request_id = std::move(received.request_id);
        batch.input_tokens = reading.input_tokens;
        if (auto limit = parse_rate_limit(received.headers)) {
            std::lock_guard lock(mutex_);
            rate_limit_ = std::move(limit);
        }
        return std::nullopt;
    }

    struct Received {
        std::string request_id;
        Headers headers;
    };

    /// The body decoded as it arrives: a pull stream whose decoder is the
    /// format's reader, on this thread, so the rows are written while the
    /// rest of the body is still on the wire and only its unread remainder is
    /// held. Retried as a stream is: until the response's head.
    std::optional<Error> receive_streamed(std::string_view body, detail::BatchReading& reading,
                                          Received& received) {
        detail::EmbeddingBodyReader reader(
            format_, reading,
            options_.max_response_bytes.value_or(nous::http::defaults::max_response_bytes));
        nous::http::Options options = options_;
        options.stream_backend = "pull";
        options.refuse_unreadable_answers = true;  // a coded body is no JSON to decode
        options.decoder = [&reader] { return detail::embedding_decoder(reader); };
        // The decoder hands out no event: deadlines that count content events are a chat's.
        options.first_event_timeout.reset();
        options.event_idle_timeout.reset();
        options.is_content_event = nullptr;
        nous::http::Stream stream = nous::http::stream(url_, body, headers_, options);
        std::optional<Error> error;
        while (auto item = stream.next_view())
            if (item->is_error()) error = *item->error;
        if (error) {
            if (error->code != ErrorCode::protocol || error->status != 0)
                return provider_error(request_.provider, *error);
            error->request_id = stream.request_id();
            error->status = stream.stats().status;
            return error;
        }
        received.request_id = stream.request_id();
        received.headers = stream.response_headers();
        return std::nullopt;
    }

    /// The body received whole, then read (a post backend other than the pooled one).
    std::optional<Error> receive_whole(std::string_view body, detail::BatchReading& reading,
                                       Received& received) {
        nous::http::Options options = options_;
        options.refuse_unreadable_answers = true;  // a coded body is no JSON to read
        auto response = nous::http::post(url_, body, headers_, options);
        if (!response) return provider_error(request_.provider, response.error());
        if (auto bad = format_.read(response->body, reading)) {
            Error e(ErrorCode::protocol, *bad);
            e.request_id = response->request_id;
            e.status = response->status;
            return e;
        }
        received.request_id = std::move(response->request_id);
        received.headers = std::move(response->headers);
        return std::nullopt;
    }

    const EmbedRequest& request_;
    const detail::EmbeddingFormat& format_;
    const nous::http::Options& options_;
    const std::vector<Range> ranges_;
    std::string url_;
    Headers headers_;
    detail::EmbeddingMatrix matrix_;
    std::vector<EmbeddingBatch> batches_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> failed_{false};
    std::mutex mutex_;
    std::optional<Error> error_;
    std::optional<RateLimit> rate_limit_;
    /// The post backend is the pooled one: bodies are decoded as they arrive.
    const bool streamed_ = [this] {
        auto name = nous::http::resolve_backend_name(options_);
        return name && name.value() == "pooled";
    }();
};

}  // namespace

Result<Embeddings> detail::run_embed(const EmbedRequest& request,
                                     const nous::http::Options& options) {
    const detail::WireFormat& wire = detail::wire_format(request.provider);
    const detail::EmbeddingFormat* format = wire.embeddings();
    if (!format) return invalid(std::string(wire.name()) + " has no embeddings API");
    if (auto bad = check(request)) return *bad;
    if (auto refused = format->refusal(request)) return invalid(*refused);
    // Gemini's embeddings name the model in the path, as its chat does.
    if (request.provider == Provider::gemini)
        if (auto bad = detail::model_in_path_check(request.model, wire.name())) return *bad;
    if (request.base_url.empty() && wire.default_base_url().empty())
        return invalid(std::string(wire.name()) + " needs a base URL");
    const std::string url = format->url(request, detail::base_url_of(wire, request.base_url));
    if (auto bad = nous::http::validate_url(url)) return *bad;
    Headers headers{{"Content-Type", "application/json"}};
    ChatRequest credentials;  // the format's credential header, as chat sends it
    credentials.provider = request.provider;
    credentials.api_key = request.api_key;
    wire.add_headers(headers, credentials);
    detail::add_caller_headers(headers, request.headers);
    if (auto bad = nous::http::validate_headers(headers)) return *bad;

    const std::size_t batch_size = request.batch_size.value_or(format->default_batch_size());
    EmbedCall call(request, *format, options,
                   batches_of(request, batch_size, format->token_budget()));
    call.set_target(url, std::move(headers));
    // The calling thread works too: one batch costs no thread at all.
    const std::size_t helpers = std::min(request.concurrency, call.batches()) - 1;
    std::vector<std::jthread> threads;
    threads.reserve(helpers);
    for (std::size_t i = 0; i < helpers; ++i) {
        try {
            threads.emplace_back([&call] { call.work(); });
        } catch (const std::system_error&) {
            break;  // no more threads to be had: fewer requests in flight, the same result
        }
    }
    call.work();
    threads.clear();  // joins
    auto result = call.result();
    if (result && request.dimensions &&
        result->dimensions != static_cast<std::size_t>(*request.dimensions))
        return Error(ErrorCode::protocol, "embeddings of " + std::to_string(result->dimensions) +
                                              " values where " +
                                              std::to_string(*request.dimensions) + " were asked");
    return result;
}

Result<Embeddings> parse_embedding_response(Provider provider, std::string_view body,
                                            std::size_t count, std::size_t dimensions) {
    const detail::EmbeddingFormat* format = detail::wire_format(provider).embeddings();
    if (!format)
        return invalid(std::string(detail::wire_format(provider).name()) +
                       " has no embeddings API");
    detail::EmbeddingMatrix matrix(count, dimensions);
    detail::BatchReading reading{matrix, 0, count, std::nullopt, {}, {}, {}};
    if (auto bad = format->read(body, reading)) return Error(ErrorCode::protocol, *bad);
    Embeddings out;
    out.count = count;
    out.dimensions = matrix.dimensions();
    out.values = matrix.take();
    if (reading.input_tokens) {
        out.usage = Usage{};
        out.usage->input_tokens = *reading.input_tokens;
    }
    out.batches.push_back(EmbeddingBatch{0, count, "", reading.input_tokens});
    return out;
}

}  // namespace nous::llm
