#pragma once
// The one call pipeline that post() and both stream backends use: a prepared
// call (validated, proxy chosen, settings merged) and its attempts (a pooled
// connection checked out, the request sent, the head read, and one
// transparent resend when a reused connection proves stale before any
// response byte and the request either did not go out whole or carries an
// Idempotency-Key). The retry policy runs around attempts (core/retry.hpp).

#include <memory>
#include <optional>
#include <string>

#include "core/config.hpp"
#include "core/url.hpp"
#include "transport/exchange.hpp"
#include "transport/pool.hpp"

namespace nous::http::detail {

/// Everything about a call that stays the same from attempt to attempt.
struct PreparedCall {
    Url url;
    std::string method = "POST";
    std::string proxy;                ///< proxy URL, or empty for a direct connection
    std::string proxy_authorization;  ///< plain http through an authenticating proxy
    Headers extra_headers;  ///< set by the library (Authorization from userinfo, Idempotency-Key)
    Settings settings;
    const Options* options = nullptr;  ///< outlives the call (streams keep their own copy)
    /// The request carries an Idempotency-Key (the caller's or ours): only
    /// then may a request that went out whole be resent after a stale reuse.
    bool has_idempotency_key = false;
};

/// Checks what every backend must refuse before anything is sent: a bad URL,
/// a header with CR/LF/NUL or not a token, a caller's Content-Length that
/// disagrees with the body, a Transfer-Encoding. Returns the parsed URL.
Result<Url> validate_call(std::string_view url, std::string_view body, const Headers& headers);

/// For a call that validate_call accepted (its URL, parsed): the proxy from
/// the environment, the settings, and the headers the library adds, into
/// `call`. `options` must outlive the prepared call.
std::optional<Error> prepare_call_into(PreparedCall& call, Url url, const Headers& headers,
                                       const Options& options, const EnvSnapshot& env,
                                       const Config& config);
/// The same, returned.
Result<PreparedCall> prepare_call(Url url, const Headers& headers, const Options& options,
                                  const EnvSnapshot& env, const Config& config);

/// One attempt of a prepared call, on the calling thread.
class Attempt {
  public:
    /// `buffer` takes the reads; with `grow_to` beyond its size, a read
    /// that fills it moves the reads to grow_to bytes of the reader's own.
    Attempt(const PreparedCall& call, const CancelToken* cancel, char* buffer,
            std::size_t buffer_size, std::size_t grow_to = 0);
    /// Gives the connection back: to the pool when release() judged it reusable, else closed.
    ~Attempt();
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;

    /// Checkout, send, read the head (1xx skipped), with the one stale resend.
    std::optional<Error> open(const Deadlines& deadlines, std::string_view body,
                              const Headers& headers);
    ResponseReader& reader() noexcept { return *reader_; }
    const ResponseReader& reader() const noexcept { return *reader_; }
    /// Whether a response is being read (open() succeeded and release() has not run).
    bool active() const noexcept { return reader_.has_value(); }
    /// The deadlines in force (streams shorten them to drain after [DONE]).
    ExchangeParams& params() noexcept { return params_; }
    bool reused() const noexcept { return reused_; }
    const ConnectTimings& timings() const noexcept { return timings_; }
    /// Gives the connection back now: pooled if the response was read to its end.
    void release();

  private:
    const PreparedCall& call_;
    ExchangeParams params_;
    char* buffer_;
    std::size_t buffer_size_;
    std::size_t grow_to_;
    std::shared_ptr<OriginPool> pool_;
    std::unique_ptr<Transport> transport_;
    std::optional<CancelRegistration> registration_;  ///< in place: no allocation per attempt
    std::optional<ResponseReader> reader_;
    bool reused_ = false;
    ConnectTimings timings_;
};

}  // namespace nous::http::detail
