// What the decoders share.

#include "codec/decoders.hpp"

namespace nous::http::detail {

Error malformed_stream(std::string message) {
    return Error(ErrorCode::malformed_stream, "malformed stream: " + std::move(message));
}

}  // namespace nous::http::detail
