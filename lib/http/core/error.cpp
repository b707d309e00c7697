// The stable names of the error codes.

#include "nous/http/error.hpp"

namespace nous::http {

std::string_view to_string(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::invalid_argument:
            return "invalid_argument";
        case ErrorCode::dns_failed:
            return "dns_failed";
        case ErrorCode::connect_failed:
            return "connect_failed";
        case ErrorCode::tls_failed:
            return "tls_failed";
        case ErrorCode::timeout_connect:
            return "timeout_connect";
        case ErrorCode::timeout_read:
            return "timeout_read";
        case ErrorCode::timeout_total:
            return "timeout_total";
        case ErrorCode::pool_timeout:
            return "pool_timeout";
        case ErrorCode::cancelled:
            return "cancelled";
        case ErrorCode::truncated:
            return "truncated";
        case ErrorCode::protocol:
            return "protocol";
        case ErrorCode::too_large:
            return "too_large";
        case ErrorCode::http_status:
            return "http_status";
        case ErrorCode::backpressure_overflow:
            return "backpressure_overflow";
        case ErrorCode::buffer_overflow:
            return "buffer_overflow";
        case ErrorCode::saturated:
            return "saturated";
        case ErrorCode::backend_unavailable:
            return "backend_unavailable";
        case ErrorCode::malformed_stream:
            return "malformed_stream";
        case ErrorCode::connection_closed:
            return "connection_closed";
    }
    return "unknown";
}

}  // namespace nous::http
