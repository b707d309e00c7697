// An application's registered Backend, joined to the one post() pipeline:
// it sees only validated calls, the headers the library adds, what is left
// of the total deadline, and never raises SIGPIPE or an exception out of post().

#include "core/cancel.hpp"
#include "nous/http/backend.hpp"
#include "post/backends.hpp"
#include "transport/sigpipe.hpp"

namespace nous::http::detail {

namespace {

class CustomBackend final : public PreparedBackend {
  public:
    explicit CustomBackend(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}

    Result<Response> post_prepared(const PreparedCall& call, const Request& request,
                                   Clock::time_point total_by) override {
        // The same headers our own backends send: the caller's, then the
        // library's (Authorization from URL userinfo, the Idempotency-Key).
        Headers headers;
        const Request* effective = &request;
        Request with_library_headers = request;
        if (!call.extra_headers.empty()) {
            headers = *request.headers;
            headers.insert(headers.end(), call.extra_headers.begin(), call.extra_headers.end());
            with_library_headers.headers = &headers;
            effective = &with_library_headers;
        }
        // What is left of the total deadline, not the whole of it again.
        std::optional<Options> shrunk;
        const Options* options = call.options;
        if (total_by != Clock::time_point::max()) {
            shrunk.emplace(*call.options);
            shrunk->total_timeout =
                std::chrono::duration_cast<Milliseconds>(total_by - Clock::now());
            options = &*shrunk;
        }
        // Code we do not know may write to a socket without MSG_NOSIGNAL
        // (docs/design/poco-traps.md#sigpipe): it never kills the process.
        SigpipeGuard guard;
        try {
            return backend_->post(*effective, *options);
        } catch (const std::exception& e) {
            return Error(ErrorCode::backend_unavailable, std::string("backend threw: ") + e.what());
        } catch (...) {
            return Error(ErrorCode::backend_unavailable, "backend threw");
        }
    }

  private:
    std::shared_ptr<Backend> backend_;
};

}  // namespace

std::shared_ptr<PreparedBackend> adapt_custom_backend(std::shared_ptr<Backend> backend) {
    if (!backend) return nullptr;
    return std::make_shared<CustomBackend>(std::move(backend));
}

}  // namespace nous::http::detail
