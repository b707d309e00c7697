// The mock's benchmark bodies (bench_bodies.hpp).

#include "bench_bodies.hpp"

#include <charconv>
#include <cstdio>
#include <string_view>

#include "wire.hpp"

namespace nous::http::mock {

namespace {

std::string filler_json(std::size_t total, const char* kind) {
    // {"object":"<kind>","data":"xxxx..."} padded to exactly `total` bytes.
    std::string head = std::string("{\"object\":\"") + kind + "\",\"data\":\"";
    std::string tail = "\"}";
    std::string out = head;
    std::size_t pad = total - head.size() - tail.size();
    out.reserve(total);
    for (std::size_t i = 0; i < pad; ++i) out += static_cast<char>('a' + (i % 26));
    out += tail;
    return out;
}

std::string chunk_event(std::string_view content) {
    std::string e =
        "data: "
        "{\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
        "\"model\":\"mock-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    e += content;
    e += "\"},\"finish_reason\":null}]}\n\n";
    return e;
}

}  // namespace

const std::string& small_body() {
    static const std::string body = filler_json(1024, "small");
    return body;
}

const std::string& large_body() {
    static const std::string body = filler_json(256 * 1024, "large");
    return body;
}

std::optional<std::size_t> sized_body_route(std::string_view route) {
    constexpr std::string_view prefix = "/body/";
    if (!route.starts_with(prefix)) return std::nullopt;
    route.remove_prefix(prefix.size());
    std::size_t mib = 0;
    auto [end, ec] = std::from_chars(route.data(), route.data() + route.size(), mib);
    if (ec != std::errc() || end != route.data() + route.size() || mib == 0 || mib > 1024)
        return std::nullopt;
    return mib;
}

bool send_sized_body(int fd, std::size_t mebibytes) {
    static const std::string block = filler_json(1024 * 1024, "bytes");
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
        "Content-Length: " +
        std::to_string(mebibytes * block.size()) + "\r\n\r\n";
    if (!send_all(fd, head)) return false;
    for (std::size_t i = 0; i < mebibytes; ++i)
        if (!send_all(fd, block)) return false;
    return true;
}

/// 1,000 chunks of 1,000 bytes (Finch's body-accumulation case), framed in one write.
bool send_chunked_1m(int fd) {
    static const std::string body = [] {
        std::string out =
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            "Transfer-Encoding: chunked\r\n\r\n";
        const std::string data(1000, 'c');
        for (int i = 0; i < 1000; ++i) out += "3e8\r\n" + data + "\r\n";
        return out + "0\r\n\r\n";
    }();
    return send_all(fd, body);
}

bool send_firehose(int fd, std::uint64_t bytes, const std::atomic<bool>& stopping) {
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
        "chunked\r\n\r\n";
    if (!send_all(fd, head)) return false;
    std::uint64_t sent = 0;
    std::uint64_t token = 0;
    std::string batch;
    while (sent < bytes && !stopping) {
        batch.clear();
        while (batch.size() < 64 * 1024) {
            char word[16];
            std::snprintf(word, sizeof word, "tok%07llu ",
                          static_cast<unsigned long long>(token++));
            batch += chunk_event(word);
        }
        if (!write_chunk(fd, batch)) return false;
        sent += batch.size();
    }
    return write_chunk(fd, "data: [DONE]\n\n", /*last=*/true);
}

/// The small-event firehose: `bytes` of one 49-byte OpenAI-style
/// event over and over (the per-event path's worst case), then [DONE].
bool send_small_events(int fd, std::uint64_t bytes, const std::atomic<bool>& stopping) {
    static const std::string batch = [] {
        const std::string event = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";
        std::string out;
        while (out.size() + event.size() <= 64 * 1024) out += event;
        return out;
    }();
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
        "chunked\r\n\r\n";
    if (!send_all(fd, head)) return false;
    for (std::uint64_t sent = 0; sent < bytes && !stopping; sent += batch.size())
        if (!write_chunk(fd, batch)) return false;
    return write_chunk(fd, "data: [DONE]\n\n", /*last=*/true);
}

}  // namespace nous::http::mock
