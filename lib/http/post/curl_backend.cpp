// The opt-in `curl` post backend (built only with NOUS_WITH_CURL): libcurl's
// easy interface driven through a per-thread multi handle, so that the idle
// read timeout is ours in milliseconds (CURLOPT_LOW_SPEED_TIME counts whole
// seconds: docs/design/poco-traps.md#curl-low-speed). One easy handle per
// thread keeps its connection; threads share DNS and TLS sessions only (a
// shared connection cache is not thread-safe in 7.88:
// docs/design/poco-traps.md#curl-shared-connections). HTTP/2 is negotiated by
// ALPN over TLS unless Options::force_http1.

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "codec/answer_head_check.hpp"
#include "codec/http1_parser.hpp"
#include "codec/retry_hint.hpp"
#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/strings.hpp"
#include "post/backends.hpp"
#include "post/curl_codes.hpp"
#include "transport/pool.hpp"
#include "transport/trust_store.hpp"

namespace nous::http::detail {

namespace {

/// DNS and TLS session sharing across threads, with the locks libcurl asks for.
class Share {
  public:
    Share() {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        share_ = curl_share_init();
        curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &Share::lock);
        curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &Share::unlock);
        curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    }
    CURLSH* get() const noexcept { return share_; }

  private:
    static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
        static_cast<Share*>(self)->mutexes_[data % kLocks].lock();
    }
    static void unlock(CURL*, curl_lock_data data, void* self) {
        static_cast<Share*>(self)->mutexes_[data % kLocks].unlock();
    }
    static constexpr int kLocks = 8;
    std::mutex mutexes_[kLocks];
    CURLSH* share_ = nullptr;
};

Share& share() {
    static auto* s = new Share;  // never destroyed: handles may outlive statics at exit
    return *s;
}

/// The sockets libcurl has open for one thread's handle, followed through its
/// open- and close-socket callbacks: a cancel shuts down exactly these, never
/// an fd number that libcurl closed and the process reused
/// (docs/design/poco-traps.md#curl-socket-reuse).
class HandleSockets final : public CancelTarget {
  public:
    void opened(int fd) {
        std::lock_guard lock(mutex_);
        fds_.push_back(fd);
    }
    void closing(int fd) {
        std::lock_guard lock(mutex_);
        fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
    }
    void interrupt() noexcept override {
        std::lock_guard lock(mutex_);
        for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }

  private:
    std::mutex mutex_;
    std::vector<int> fds_;  ///< guarded by mutex_
};

/// One easy handle (and its multi driver) per thread: its connection is reused.
struct ThreadHandle {
    HandleSockets sockets;  // first: connections close (through it) in the cleanups below
    CURL* easy = curl_easy_init();
    CURLM* multi = curl_multi_init();
    std::uint64_t clear_generation = pool_clear_generation();
    ~ThreadHandle() {
        curl_multi_cleanup(multi);
        curl_easy_cleanup(easy);
    }
};

/// One request header in libcurl's list syntax. "Name:" would remove the
/// header (and libcurl's own of that name) instead of sending it empty;
/// "Name;" is libcurl's spelling of a header with an empty value, which the
/// pooled backend sends as "Name: ".
std::string curl_header_line(const std::string& name, const std::string& value) {
    return value.empty() ? name + ";" : name + ": " + value;
}

/// The system store for libcurl, from the same once-parsed certificates as
/// the pooled contexts (transport/trust_store.hpp). libcurl 7.88 would parse
/// its CA file again for every new connection (~60 ms for the system bundle,
/// docs/design/poco-traps.md#curl-ca-per-connection); here it parses at most
/// the caller's ca_file (CURLOPT_CAINFO) and the callback adds the system
/// certificates to the connection's own store. Never the shared store itself:
/// libcurl may load ca_file into the context's store after this callback.
CURLcode on_ssl_context(CURL*, void* ssl_ctx, void*) {
    add_system_trust_unshared(static_cast<SSL_CTX*>(ssl_ctx));
    return CURLE_OK;
}

/// A ca_file that cannot be read is refused before any connection, as the
/// pooled backend refuses it (checked once per path).
std::optional<Error> check_ca_file(const std::string& ca_file) {
    static std::mutex mutex;
    static std::string readable;
    std::lock_guard lock(mutex);
    if (readable == ca_file) return std::nullopt;
    std::ifstream file(ca_file);
    if (!file) return Error(ErrorCode::tls_failed, "cannot read ca_file " + ca_file);
    readable = ca_file;
    return std::nullopt;
}

struct Transfer {
    std::string body;
    Headers headers;
    std::size_t limit = 0;
    bool too_large = false;
    std::uint64_t bytes_in = 0;  ///< head and body bytes, for "any response byte"
    Clock::time_point last_activity;
    int receive_buffer_bytes = 0;
    bool idle_expired = false;
    std::size_t heads = 0;          ///< status lines seen: the 1xx ones, then the answer's
    bool interim_overflow = false;  ///< more 1xx heads than limits::max_interim_responses
    ThreadHandle* handle = nullptr;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->last_activity = Clock::now();
    t->bytes_in += n;
    if (t->body.size() + n > t->limit) {
        t->too_large = true;
        return 0;  // CURLE_WRITE_ERROR
    }
    t->body.append(data, n);
    return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->last_activity = Clock::now();
    t->bytes_in += n;
    std::string_view line(data, n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.rfind("HTTP/", 0) == 0) {
        // libcurl skips 1xx heads without a count of its own (only its 300 KB
        // of headers ends them): the same cap as the pooled backend's.
        if (++t->heads > limits::max_interim_responses + 1) {
            t->interim_overflow = true;
            return 0;  // CURLE_WRITE_ERROR
        }
        t->headers.clear();  // a new head (a 1xx before it is skipped)
        return n;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos && colon > 0)
        t->headers.emplace_back(to_lower(line.substr(0, colon)),
                                std::string(trim(line.substr(colon + 1))));
    return n;
}

/// Our socket, so that a cancel can shut it down from the moment it exists.
curl_socket_t on_open_socket(void* user, curlsocktype, curl_sockaddr* address) {
    auto* t = static_cast<Transfer*>(user);
    curl_socket_t fd =
        ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;
    // Before the SYN: the window scale is fixed at handshake time.
    if (t->receive_buffer_bytes > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t->receive_buffer_bytes, sizeof(int));
    t->handle->sockets.opened(fd);
    return fd;
}

/// libcurl keeps this callback with the connection, so it runs for every
/// socket opened above, whichever transfer closes it.
int on_close_socket(void* user, curl_socket_t fd) {
    static_cast<ThreadHandle*>(user)->sockets.closing(fd);
    return ::close(fd);
}

std::chrono::microseconds info_us(CURL* easy, CURLINFO what) {
    curl_off_t v = 0;
    curl_easy_getinfo(easy, what, &v);
    return std::chrono::microseconds(v);
}

class CurlBackend final : public PreparedBackend {
  public:
    /// libcurl resends a request on a reused connection that fails before
    /// any response byte, however long after it left: only a key makes that
    /// safe (docs/design/poco-traps.md#curl-resend).
    bool resends_whole_requests() const noexcept override { return true; }

    Result<Response> post_prepared(const PreparedCall& call, const Request& request,
                                   Clock::time_point total_by) override {
        const Options& options = *call.options;
        // pool_clear() closes this thread's connection too, at its next call:
        // a handle is not safe to touch from another thread.
        thread_local std::unique_ptr<ThreadHandle> handle_slot;
        if (!handle_slot || handle_slot->clear_generation != pool_clear_generation()) {
            handle_slot.reset();
            handle_slot = std::make_unique<ThreadHandle>();
        }
        ThreadHandle& handle = *handle_slot;
        CURL* easy = handle.easy;
        // Reset options, keep the connection and caches of this thread's handle.
        curl_easy_reset(easy);
        const Settings& s = call.settings;
        const Deadlines deadlines = deadlines_for(s, total_by);

        Transfer t;
        t.limit = s.max_response_bytes;
        t.last_activity = Clock::now();
        t.receive_buffer_bytes = options.receive_buffer_bytes;
        t.handle = &handle;

        std::string url(request.url);
        curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
        curl_easy_setopt(easy, CURLOPT_SHARE, share().get());
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        const std::string method(request.method);
        if (method == "GET") {
            curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
        } else {
            curl_easy_setopt(easy, CURLOPT_POST, 1L);
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                             static_cast<curl_off_t>(request.body.size()));
        }
        // A reused handle keeps the last call's method: POST and GET clear it.
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST,
                         method == "POST" || method == "GET" ? nullptr : method.c_str());
        curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are never followed (SSRF)
        curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, options.tcp_nodelay ? 1L : 0L);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                         static_cast<long>(s.connect_timeout.count()));
        if (total_by != Clock::time_point::max())
            curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                             static_cast<long>(std::max(1, millis_until(total_by))));
        curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                         static_cast<curl_off_t>(s.max_response_bytes));
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
        char error_text[CURL_ERROR_SIZE] = {0};
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_text);
        curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &on_open_socket);
        curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &t);
        curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &on_close_socket);
        curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, &handle);
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                         options.force_http1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS);
        // Proxies: ours, from the same environment rules; libcurl's own env reading off.
        curl_easy_setopt(easy, CURLOPT_PROXY, call.proxy.c_str());
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
        // TLS: verification on unless explicitly insecure; ca_file adds to the system store.
        curl_easy_setopt(easy, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2);
        if (options.insecure) {
            curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
            warn_once(
                "curl-insecure:" + call.url.origin(),
                "TLS certificate verification is OFF for " + call.url.origin() + " (insecure)");
        }
        if (!options.ca_file.empty())
            if (auto e = check_ca_file(options.ca_file)) return *e;
        curl_easy_setopt(easy, CURLOPT_CAINFO,
                         options.ca_file.empty() ? nullptr : options.ca_file.c_str());
        curl_easy_setopt(easy, CURLOPT_CAPATH, nullptr);
        curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, &on_ssl_context);
        // Headers: our defaults unless given, no "Expect: 100-continue" round trip.
        curl_slist* list = nullptr;
        bool has_type = false, has_agent = false, has_accept = false;
        for (const auto& [k, v] : *request.headers) {
            has_type |= header_name_equals(k, "content-type");
            has_agent |= header_name_equals(k, "user-agent");
            has_accept |= header_name_equals(k, "accept");
            if (header_name_equals(k, "content-length") ||
                header_name_equals(k, "transfer-encoding"))
                continue;
            list = curl_slist_append(list, curl_header_line(k, v).c_str());
        }
        if (!has_type) list = curl_slist_append(list, "Content-Type: application/json");
        if (!has_agent) list = curl_slist_append(list, "User-Agent: nous-http/0.1 (curl)");
        // libcurl's own "Accept: */*" is not on the pooled backend's wire: the
        // same call sends the same headers whichever backend runs it.
        if (!has_accept) list = curl_slist_append(list, "Accept:");
        for (const auto& [k, v] : call.extra_headers)
            list = curl_slist_append(list, curl_header_line(k, v).c_str());
        list = curl_slist_append(list, "Expect:");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);

        const auto start = Clock::now();
        CURLcode rc = CURLE_OK;
        {
            CancelRegistration registration(options.cancel, &handle.sockets);
            rc = drive(handle, t, deadlines, options.cancel);
        }
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
        curl_slist_free_all(list);

        long status = 0, version = 0, connects = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
        curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
        if (rc != CURLE_OK) {
            if (is_cancelled(options.cancel)) return Error(ErrorCode::cancelled, "cancelled");
            if (rc == CURLE_WRITE_ERROR && t.interim_overflow)
                return Error(ErrorCode::protocol, interim_overflow_message());
            if (rc == CURLE_WRITE_ERROR && t.too_large) rc = CURLE_FILESIZE_EXCEEDED;
            curl_off_t connect_us = 0;
            curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
            std::string detail = error_text[0] ? error_text : curl_easy_strerror(rc);
            Error e(map_code(rc, t.bytes_in > 0, connect_us > 0, detail), "curl: " + detail);
            if (rc == CURLE_FILESIZE_EXCEEDED) e.status = static_cast<int>(status);
            return e;
        }
        if (t.idle_expired) return Error(ErrorCode::timeout_read, "read timed out");
        Response r;
        r.status = static_cast<int>(status);
        r.http_version = version_name(version);
        r.connection_reused = connects == 0;
        r.timings.resolve = info_us(easy, CURLINFO_NAMELOOKUP_TIME_T);
        r.timings.connect = info_us(easy, CURLINFO_CONNECT_TIME_T) - r.timings.resolve;
        auto tls_done = info_us(easy, CURLINFO_APPCONNECT_TIME_T);
        r.timings.tls = tls_done.count() > 0 ? tls_done - info_us(easy, CURLINFO_CONNECT_TIME_T)
                                             : std::chrono::microseconds(0);
        r.timings.ttfb = info_us(easy, CURLINFO_STARTTRANSFER_TIME_T);
        r.timings.total =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
        if (r.status / 100 == 2) {
            // libcurl decodes nothing unless told to (CURLOPT_ACCEPT_ENCODING,
            // never set): a body in a coding nobody asked for is not the answer.
            if (auto e = options.refuse_unreadable_answers
                             ? unasked_content_coding(t.headers, *request.headers)
                             : std::nullopt) {
                t.body.resize(std::min(t.body.size(), s.max_error_body_bytes));
                return with_answer(std::move(*e), r.status, std::move(t.headers),
                                   std::move(t.body));
            }
            r.headers = std::move(t.headers);
            r.request_id = request_id_of(r.headers);
            r.body = std::move(t.body);
            return r;
        }
        ResponseHead head;
        head.status = r.status;
        head.headers = std::move(t.headers);
        if (t.body.size() > s.max_error_body_bytes) {
            Error e(ErrorCode::too_large, "error body exceeds the limit");
            e.status = r.status;
            e.headers = std::move(head.headers);
            return e;
        }
        return http_status_error(head, std::move(t.body));
    }

  private:
    /// Runs the transfer on this thread's multi handle, enforcing the idle
    /// read timeout in milliseconds and noticing a cancel within 20 ms.
    static CURLcode drive(ThreadHandle& h, Transfer& t, const Deadlines& d,
                          const CancelToken* cancel) {
        curl_multi_add_handle(h.multi, h.easy);
        CURLcode result = CURLE_OK;
        for (;;) {
            int running = 0;
            curl_multi_perform(h.multi, &running);
            int queued = 0;
            bool finished = false;
            while (CURLMsg* msg = curl_multi_info_read(h.multi, &queued)) {
                if (msg->msg == CURLMSG_DONE) {
                    result = msg->data.result;
                    finished = true;
                }
            }
            if (finished || running == 0) break;
            if (is_cancelled(cancel)) {
                result = CURLE_ABORTED_BY_CALLBACK;
                break;
            }
            // Idle: no byte of head or body for the read timeout, counted from
            // the moment the request starts (connecting is the connect timeout's).
            curl_off_t pretransfer_us = 0;
            curl_easy_getinfo(h.easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
            const auto now = Clock::now();
            const bool started = pretransfer_us > 0 || t.bytes_in > 0;
            if (started && now - t.last_activity > d.idle) {
                t.idle_expired = true;
                break;
            }
            if (!started) t.last_activity = now;
            int wait_ms = std::min<int>(20, std::max(1, millis_until(t.last_activity + d.idle)));
            curl_multi_poll(h.multi, nullptr, 0, wait_ms, nullptr);
        }
        curl_multi_remove_handle(h.multi, h.easy);
        return result;
    }
};

}  // namespace

std::shared_ptr<PreparedBackend> make_curl_backend() { return std::make_shared<CurlBackend>(); }

}  // namespace nous::http::detail
