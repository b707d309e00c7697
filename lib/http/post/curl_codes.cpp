// libcurl's results in our terms (post/curl_codes.hpp).

#include "post/curl_codes.hpp"

namespace nous::http::detail {

ErrorCode map_code(CURLcode rc, bool any_byte, bool connected, std::string_view detail) {
    // Bad framing from the server, whatever code libcurl files it under.
    // (A non-HTTP answer is refused as "HTTP/0.9" before any header callback.)
    if (detail.find("HTTP/0.9") != std::string_view::npos) return ErrorCode::protocol;
    if (any_byte && (detail.find("chunk") != std::string_view::npos ||
                     detail.find("Malformed") != std::string_view::npos ||
                     detail.find("Too large response headers") != std::string_view::npos))
        return ErrorCode::protocol;
    switch (rc) {
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
        case CURLE_BAD_FUNCTION_ARGUMENT:
            return ErrorCode::invalid_argument;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
            return ErrorCode::dns_failed;
        case CURLE_COULDNT_CONNECT:
            return ErrorCode::connect_failed;
        case CURLE_GOT_NOTHING:
        case CURLE_SEND_ERROR:
            // Connected and then lost before any response byte: the server
            // may have acted on the request (not a connect failure).
            return any_byte    ? ErrorCode::truncated
                   : connected ? ErrorCode::connection_closed
                               : ErrorCode::connect_failed;
        case CURLE_OPERATION_TIMEDOUT:
            return connected ? ErrorCode::timeout_total : ErrorCode::timeout_connect;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_INVALIDCERTSTATUS:
            return ErrorCode::tls_failed;
        case CURLE_PARTIAL_FILE:
        case CURLE_RECV_ERROR:
            return any_byte    ? ErrorCode::truncated
                   : connected ? ErrorCode::connection_closed
                               : ErrorCode::connect_failed;
        case CURLE_FILESIZE_EXCEEDED:
            return ErrorCode::too_large;
        case CURLE_ABORTED_BY_CALLBACK:
            return ErrorCode::cancelled;
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_BAD_CONTENT_ENCODING:
        case CURLE_HTTP3:
            return ErrorCode::protocol;
        default:
            return ErrorCode::connect_failed;
    }
}

std::string version_name(long v) {
    switch (v) {
        case CURL_HTTP_VERSION_1_0:
            return "HTTP/1.0";
        case CURL_HTTP_VERSION_2_0:
            return "HTTP/2";
        case CURL_HTTP_VERSION_3:
            return "HTTP/3";
        default:
            return "HTTP/1.1";
    }
}

}  // namespace nous::http::detail
