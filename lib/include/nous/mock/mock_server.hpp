#pragma once
// An in-process OpenAI-compatible mock LLM server for tests, demos and
// benchmarks. Raw sockets, one thread per connection (so it serves any number
// of concurrent keep-alive connections), bound to 127.0.0.1 by default.
//
// Routes (every one; lib/mock/mock_server.cpp `serve`):
//   POST /v1/chat/completions   OpenAI chat completions: JSON, or SSE when "stream": true
//   POST /v1/messages           Anthropic Messages: JSON, or SSE when "stream": true
//   POST /v1beta/models/M:generateContent, :streamGenerateContent?alt=sse   Gemini
//        (chat replies carry a tool call when the request offers tools)
//   POST /v1/embeddings, /v1beta/models/M:batchEmbedContents   embeddings: a unit
//        vector derived from each text, base64 or floats as asked
//   GET  /v1/models             model list
//   POST /small                 ~1 KiB JSON          POST /large   256 KiB JSON
//   POST /chunked1m             1,000 chunks of 1,000 bytes
//   POST /sse100m               ~100 MiB SSE body generated on the fly
//   POST /sse49                 as much again in 49-byte events (the per-event worst case)
//   POST /echo                  the request body back, same Content-Type
//   anything else               404 with an OpenAI-shaped error
// A custom handler may answer any request first (tests: 429, 503, ...).
// Replies are generated as they are sent: memory per connection does not
// grow with a reply's length.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nous::http {

struct MockRequest {
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;  ///< lower-case names
    std::string body;
    std::optional<std::string> header(const std::string& lower_name) const;
};

struct MockResponse {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

struct MockServerOptions {
    std::string bind_address = "127.0.0.1";
    std::uint16_t port = 0;  ///< 0: an ephemeral port
    /// Nagle on, and headers and body written in separate send() calls: the
    /// "nagle on server" case that costs clients without TCP_QUICKACK ~40 ms.
    bool nagle = false;
    /// Streaming completions: tokens per reply, pacing, first-token latency.
    int stream_tokens = 16;
    double tokens_per_second = 0;  ///< 0: as fast as possible
    std::chrono::milliseconds first_token_latency{0};
    /// Bytes of /sse100m (default 100 MiB).
    std::uint64_t firehose_bytes = 100ull << 20;
    /// Close idle keep-alive connections after this long (0: never): a
    /// client's leaked connections never hold a thread for ever.
    std::chrono::milliseconds idle_close{60000};
    /// Request bodies past this many bytes are answered 413 and the
    /// connection closed, before anything of them is buffered.
    std::uint64_t max_request_body = 64ull << 20;
    /// Connections served at once; one more is answered 503 and closed (a
    /// thread each: past the machine's limit, a client's bug would abort the mock).
    std::size_t max_connections = 1024;
    /// Chat replies (all three formats) call this tool even when the request
    /// offers none; empty: a tool call only when the request offers tools.
    std::string tool_call;
    /// Every chat and embeddings request fails this way, as the request
    /// header `x-mock-fault: NAME` would make it (a request's own header
    /// wins); empty: none. start() refuses an unknown name.
    std::string fault;
    /// Per-key limits (the key: the credential header's value), requests and
    /// tokens per minute, in windows aligned to the clock's minute; past one
    /// the reply is the provider's 429 with `retry-after`. tpm counts a
    /// request's input tokens (the mock's count) and the output it answers
    /// with. 0: no limit (the rate-limit headers still give real resets).
    std::int64_t rpm = 0, tpm = 0;
    /// Non-empty: a model request (chat, embeddings, counting) whose
    /// credential header is not this key (`Bearer KEY` for a bearer) gets
    /// the provider's, or the platform's, 401.
    std::string require_key;
    /// Non-empty: a Bedrock request signed with SigV4 has its signature
    /// recomputed with this secret (the access key id is whatever it names)
    /// and is refused as AWS refuses it (403 InvalidSignatureException, or
    /// "Signature expired" past 5 minutes of skew); an unsigned one gets 403
    /// MissingAuthenticationTokenException. A bearer passes (checked by
    /// require_key when that is set).
    std::string aws_secret;
    /// A Google service account key file: POST /token verifies each JWT's
    /// RS256 signature with its key, and Vertex's routes take only a bearer
    /// the mock issued. Empty: any assertion and any bearer pass.
    std::string google_key_file;
    /// A folder the body of every chat and embeddings request is written to,
    /// one file each, `NNNNNN.KIND.json` in the order served (KIND:
    /// openai-chat, openai-responses, anthropic@VERSION, gemini,
    /// openai-embeddings, gemini-embeddings): what `make sdk-test` type-checks
    /// against the providers' own request types. Empty: none recorded.
    std::string record_dir;
};

class MockServer {
  public:
    using Handler = std::function<bool(const MockRequest&, MockResponse&)>;

    explicit MockServer(MockServerOptions options = {});
    ~MockServer();
    MockServer(const MockServer&) = delete;
    MockServer& operator=(const MockServer&) = delete;

    /// Binds and starts accepting. Throws std::runtime_error on failure.
    void start();
    /// Stops accepting, closes every connection, joins every thread.
    void stop();

    std::uint16_t port() const noexcept;
    /// "http://127.0.0.1:PORT"
    std::string base_url() const;

    /// Answer requests first; return false to fall through to the routes.
    void set_handler(Handler handler);

    std::uint64_t connections_accepted() const noexcept;
    std::uint64_t requests_served() const noexcept;
    /// The most recent request (headers and body included).
    MockRequest last_request() const;

    /// The body /small answers (deterministic, for checks).
    static std::string small_body();
    /// The body /large answers.
    static std::string large_body();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace nous::http
