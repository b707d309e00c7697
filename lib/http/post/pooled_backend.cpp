// The default `post` backend: keep-alive POCO sessions from a per-origin pool,
// through the shared call pipeline.

#include "codec/answer_head_check.hpp"
#include "codec/retry_hint.hpp"
#include "core/limits.hpp"
#include "post/backends.hpp"

namespace nous::http::detail {

namespace {

std::chrono::microseconds micros(Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

class PooledBackend final : public PreparedBackend {
  public:
    Result<Response> post_prepared(const PreparedCall& call, const Request& request,
                                   Clock::time_point total_by) override {
        const auto start = Clock::now();
        // One read buffer per thread: the exchange runs start to end on the calling thread.
        constexpr std::size_t buffer_size = limits::read_buffer_bytes;
        thread_local std::unique_ptr<char[]> buffer(new char[buffer_size]);
        Attempt attempt(call, call.options->cancel, buffer.get(), buffer_size);
        if (auto e = attempt.open(deadlines_for(call.settings, total_by), request.body,
                                  *request.headers))
            return *e;
        ResponseReader& reader = attempt.reader();
        ResponseHead& head = reader.head();
        const bool success = head.status / 100 == 2;
        std::string body;
        if (auto e = reader.read_whole_body(body, success ? call.settings.max_response_bytes
                                                          : attempt.params().max_error_body_bytes))
            return *e;
        const auto first_byte = reader.first_byte();
        Response response;
        response.status = head.status;
        response.http_version = head.http_version();
        response.headers = std::move(head.headers);
        response.request_id = request_id_of(response.headers);
        // A body in a coding nobody asked for is not handed on as the answer.
        if (auto e = success && call.options->refuse_unreadable_answers
                         ? unasked_content_coding(response.headers, *request.headers)
                         : std::nullopt) {
            attempt.release();
            body.resize(std::min(body.size(), call.settings.max_error_body_bytes));
            return with_answer(std::move(*e), response.status, std::move(response.headers),
                               std::move(body));
        }
        if (!success) {
            ResponseHead error_head;
            error_head.status = response.status;
            error_head.reason = head.reason;
            error_head.headers = std::move(response.headers);
            attempt.release();
            return http_status_error(error_head, std::move(body));
        }
        attempt.release();
        response.body = std::move(body);
        response.connection_reused = attempt.reused();
        response.timings.resolve = attempt.timings().resolve;
        response.timings.connect = attempt.timings().connect;
        response.timings.tls = attempt.timings().tls;
        response.timings.ttfb = micros(first_byte - start);
        response.timings.total = micros(Clock::now() - start);
        return response;
    }
};

}  // namespace

std::shared_ptr<PreparedBackend> make_pooled_backend() { return std::make_shared<PooledBackend>(); }

}  // namespace nous::http::detail
