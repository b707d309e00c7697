#pragma once
// The mock server's state and its answers' steps (nous_mock internal):
// mock_server.cpp holds the lifecycle, the routes and what every answer
// passes first; chat_answer.cpp and embeddings_answer.cpp answer their routes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "chat_requests.hpp"
#include "embedding_replies.hpp"
#include "faults.hpp"
#include "google_tokens.hpp"
#include "nous/mock/mock_server.hpp"
#include "otlp_receiver.hpp"
#include "prompt_caches.hpp"
#include "provider_formats.hpp"
#include "rate_limits.hpp"
#include "request_recorder.hpp"
#include "token_counts.hpp"
#include "wire.hpp"

namespace nous::http {

namespace mock {
/// Between two keep-alives of a quiet stream (the faults keepalive_only and slow_first_token).
inline constexpr std::chrono::milliseconds kKeepaliveGap(50);
}  // namespace mock

struct MockServer::Impl {
    MockServerOptions options;
    std::unique_ptr<mock::RateLimiter> limiter;       ///< made by start(), from the options
    std::unique_ptr<mock::RequestRecorder> recorder;  ///< made by start(): record_dir
    std::unique_ptr<mock::GoogleTokens> google;       ///< made by start(): google_key_file
    mock::OtlpReceiver otlp;                          ///< POST /v1/traces, /v1/metrics; GET /otlp
    mock::PromptCaches prompt_caches;                 ///< what each server's callers cached
    int listen_fd = -1;
    std::uint16_t port = 0;
    std::thread acceptor;
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> accepted{0}, served{0}, refused{0};

    /// Readable once stop() begins: every pacing sleep waits on it. A
    /// condition variable under `mutex` made each sleeping stream take the
    /// lock the accept loop needs, twice a token: at 10,000 streams the
    /// accept loop starved, the kernel's accept queue overflowed, and SYNs
    /// dropped and resent with backoff left streams 30 s late.
    int stop_fd = -1;

    mutable std::mutex mutex;  // guards everything below
    Handler handler;
    MockRequest last;
    struct Conn {
        int fd;
        std::thread thread;
    };
    std::list<Conn> connections;
    /// Connections whose thread has finished, for the accept loop to join
    /// and close: reaping those alone, not a walk of every connection at
    /// every accept (10,000 of them under the lock, at each of 10,000 accepts).
    std::vector<std::list<Conn>::iterator> finished;

    /// Sleeps `d`; false when the server stops meanwhile.
    bool sleep_for(std::chrono::milliseconds d);

    void accept_loop();
    /// A connection the mock cannot serve: 503 (the request is not read), closed.
    void refuse(int fd, const std::string& why);
    /// Reads requests on one connection and answers each by its route.
    void serve(int fd);

    bool write_response(int fd, const MockResponse& response) {
        return mock::write_response(fd, response.status, response.headers, response.body,
                                    options.nagle);
    }

    bool write_response(int fd, int status,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::string_view body) {
        return mock::write_response(fd, status, headers, body, options.nagle);
    }

    /// A streamed reply: the SSE events in one chunked body, paced like generation
    /// (first-token latency, then tokens_per_second between events), each
    /// event made as it is sent; or the stream a fault asks for.
    bool stream_events(int fd, mock::EventStream events, const std::string& head_lines,
                       mock::Fault fault, std::chrono::milliseconds fault_delay);

    /// A non-streamed reply of any length: Content-Length from the generator,
    /// the body sent in pieces as it is made (one write when it is small).
    bool write_whole(int fd, const mock::WholeBody& body, const std::string& id_header);

    /// What every chat and embeddings answer passes once its request is read:
    /// the key's limits (past them, the provider's 429), then a fault that
    /// answers before any body. The operations headers when the answer goes
    /// on; nullopt when the reply was written here (`written` says how).
    std::optional<mock::HeaderList> admit(int fd, mock::Format format, const MockRequest& request,
                                          mock::Fault fault, std::int64_t input_tokens,
                                          std::int64_t output_tokens, bool& written);

    /// keepalive_only on a whole reply: it has nothing to keep alive, so no
    /// byte at all, until the client gives up (or the server stops).
    bool hold_silent(int fd);

    /// Answers a chat request: streamed, or whole after as long as generating
    /// it would take; or fails as its x-mock-fault header asks.
    bool answer_chat(int fd, const mock::ChatRoute& route, const MockRequest& request);

    /// Answers an embeddings request, whole, with the operations headers of
    /// chat; or fails as its x-mock-fault header asks (those of a whole reply).
    bool answer_embeddings(int fd, const mock::EmbeddingRoute& route, const MockRequest& request);
};

}  // namespace nous::http
