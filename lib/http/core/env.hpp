#pragma once
// The environment variables the library reads, collected in one pass over
// `environ` (each getenv() is a full scan; a post would otherwise make five).
// Read when a call resolves its backend: tests set them before starting threads.

namespace nous::http::detail {

struct EnvSnapshot {
    const char* http_backend = nullptr;         ///< NOUS_HTTP_BACKEND
    const char* http_stream_backend = nullptr;  ///< NOUS_HTTP_STREAM_BACKEND
    const char* http_config = nullptr;          ///< NOUS_HTTP_CONFIG
    const char* http_window_relay = nullptr;    ///< NOUS_HTTP_WINDOW_RELAY ("off": reader-only)
    const char* http_proxy = nullptr;           ///< http_proxy (lower case only: httpoxy)
    const char* https_proxy = nullptr;          ///< https_proxy, else HTTPS_PROXY
    const char* no_proxy = nullptr;             ///< no_proxy, else NO_PROXY
};

/// Empty values count as unset.
EnvSnapshot read_env() noexcept;

}  // namespace nous::http::detail
