// The mock's embeddings answer: deterministic vectors in OpenAI's or
// Gemini's shape, whole, with chat's operations headers and faults.

#include <string>

#include "server_impl.hpp"

namespace nous::http {

/// Answers an embeddings request, whole, with the operations headers of
/// chat; or fails as its x-mock-fault header asks (those of a whole reply).
bool MockServer::Impl::answer_embeddings(int fd, const mock::EmbeddingRoute& route,
                                         const MockRequest& request) {
    using mock::Fault;
    MockResponse error, response;
    auto fault = mock::requested_fault(request, options.fault, error);
    std::int64_t input_tokens = 0;
    if (!fault || !mock::embedding_reply(route, request, response.body, input_tokens, error))
        return write_response(fd, error);
    bool written = false;
    auto operations = admit(fd, route.format, request, *fault, input_tokens, 0, written);
    if (!operations) return written;
    if (*fault == Fault::slow_first_token && !sleep_for(mock::fault_delay(request))) return false;
    if (*fault == Fault::keepalive_only) return hold_silent(fd);
    if (*fault == Fault::midstream_error || *fault == Fault::truncate) {
        // Cut in half: Content-Length promises more than is sent, and the connection closes.
        std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
        for (const auto& [name, value] : *operations) out += name + ": " + value + "\r\n";
        out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
        out.append(response.body, 0, response.body.size() / 2);
        mock::send_all(fd, out);
        return false;
    }
    response.headers = std::move(*operations);
    return write_response(fd, response);  // head and body in one send, the body not copied
}

}  // namespace nous::http
