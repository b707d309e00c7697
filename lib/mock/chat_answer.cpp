// The mock's chat answer: a request in any provider's format answered
// streamed (SSE events paced like generation) or whole, or failed as its
// fault asks.

#include <string>

#include "server_impl.hpp"

namespace nous::http {

/// A streamed reply: the SSE events in one chunked body, paced like generation
/// (first-token latency, then tokens_per_second between events), each
/// event made as it is sent; or the stream a fault asks for.
bool MockServer::Impl::stream_events(int fd, mock::EventStream events,
                                     const std::string& head_lines, mock::Fault fault,
                                     std::chrono::milliseconds fault_delay) {
    using mock::Fault;
    const char* type = events.format() == mock::Format::bedrock
                           ? "application/vnd.amazon.eventstream"
                           : "text/event-stream";
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: " + std::string(type) +
                       "\r\nCache-Control: no-cache\r\n" + head_lines +
                       "Transfer-Encoding: chunked\r\n\r\n";
    if (!mock::send_all(fd, head)) return false;
    if (fault == Fault::keepalive_only || fault == Fault::slow_first_token) {
        // Keep-alives only: forever, or until the slow first token is due.
        const auto until = std::chrono::steady_clock::now() + fault_delay;
        const std::string keepalive(mock::keepalive_event(events.format()));
        while (fault == Fault::keepalive_only || std::chrono::steady_clock::now() < until) {
            if ((!keepalive.empty() && !mock::write_chunk(fd, keepalive)) ||
                !sleep_for(mock::kKeepaliveGap))
                return false;
        }
    }
    if (options.first_token_latency.count() > 0 && !sleep_for(options.first_token_latency))
        return false;
    auto gap =
        options.tokens_per_second > 0
            ? std::chrono::milliseconds(static_cast<long long>(1000.0 / options.tokens_per_second))
            : std::chrono::milliseconds(0);
    // midstream_error and truncate stop after the prologue and a few tokens.
    const bool stops_early = fault == Fault::midstream_error || fault == Fault::truncate;
    const std::size_t sent_before_fault = events.prologue_size() + mock::kTokensBeforeFault;
    std::string event, following;
    bool have = events.next(event);
    std::size_t sent = 0;
    for (bool first = true; have; first = false) {
        if (!first && gap.count() > 0 && !sleep_for(gap)) return false;
        if (stops_early && sent == sent_before_fault) {
            if (fault == Fault::midstream_error &&
                !mock::write_chunk(fd, mock::midstream_error_event(events.format())))
                return false;
            return mock::write_chunk(fd, "", /*last=*/true);
        }
        const bool more = events.next(following);
        if (!mock::write_chunk(fd, event, /*last=*/!more)) return false;
        ++sent;
        event.swap(following);
        have = more;
    }
    return true;
}

/// A non-streamed reply of any length: Content-Length from the generator,
/// the body sent in pieces as it is made (one write when it is small).
bool MockServer::Impl::write_whole(int fd, const mock::WholeBody& body,
                                   const std::string& id_header) {
    constexpr std::size_t piece = 64 * 1024;
    const std::uint64_t size = body.size();
    std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + id_header +
                      "Content-Length: " + std::to_string(size) + "\r\n\r\n";
    if (options.nagle) {
        // Two writes with Nagle on: the body waits for the client's ACK of the head.
        if (!mock::send_all(fd, out)) return false;
        out.clear();
    }
    std::uint64_t offset = 0;
    while (offset < size) {
        const std::size_t added = body.read(offset, piece, out);
        offset += added;
        if (out.size() >= piece || offset >= size) {
            if (!mock::send_all(fd, out)) return false;
            out.clear();
        }
    }
    return out.empty() || mock::send_all(fd, out);
}

/// Answers a chat request: streamed, or whole after as long as generating
/// it would take; or fails as its x-mock-fault header asks.
bool MockServer::Impl::answer_chat(int fd, const mock::ChatRoute& route,
                                   const MockRequest& request) {
    using mock::Fault;
    bool stream = false;
    mock::Reply reply;
    MockResponse error;
    auto fault = mock::requested_fault(request, options.fault, error);
    if (!fault || !mock::read_chat(route, request, options, *fault, stream, reply, error))
        return write_response(fd, error);
    prompt_caches.apply(route.format, request, reply);
    const std::int64_t output_tokens = reply.tokens;  // words, or the pieces of a text given whole
    bool written = false;
    const auto operations =
        admit(fd, route.format, request, *fault, reply.prompt_tokens, output_tokens, written);
    if (!operations) return written;
    std::string head_lines;
    for (const auto& [name, value] : *operations) head_lines += name + ": " + value + "\r\n";
    if (stream)
        return stream_events(fd, mock::EventStream(route.format, std::move(reply)), head_lines,
                             *fault, mock::fault_delay(request));
    auto generation = options.first_token_latency;
    if (options.tokens_per_second > 0)
        generation += std::chrono::milliseconds(
            static_cast<long long>(1000.0 * options.stream_tokens / options.tokens_per_second));
    if (*fault == Fault::slow_first_token) generation += mock::fault_delay(request);
    if (*fault == Fault::keepalive_only) return hold_silent(fd);
    if (generation.count() > 0 && !sleep_for(generation)) return false;
    const auto body = mock::whole_body(route.format, reply);
    if (*fault == Fault::midstream_error || *fault == Fault::truncate) {
        // A whole reply cut in half: Content-Length promises more than is sent.
        std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + head_lines +
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
        body.read(0, static_cast<std::size_t>(body.size() / 2), out);
        mock::send_all(fd, out);
        return false;  // and the connection closes
    }
    return write_whole(fd, body, head_lines);
}

}  // namespace nous::http
