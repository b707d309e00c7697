#pragma once
// The mock's benchmark bodies (nous_mock internal): the small and large JSON
// bodies, the chunked megabyte, and the two SSE firehoses, each written
// straight to a connection.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nous::http::mock {

/// ~1 KiB of JSON (POST /small); the same bytes every time.
const std::string& small_body();
/// 256 KiB of JSON (POST /large).
const std::string& large_body();
/// `mebibytes` MiB of bytes with a Content-Length (POST /body/N, N at most 1024): the
/// large-body scenarios, written from one reused MiB so the mock allocates nothing per call.
bool send_sized_body(int fd, std::size_t mebibytes);
/// N of a route /body/N (1..1024), or nothing for any other route.
std::optional<std::size_t> sized_body_route(std::string_view route);
/// 1,000 chunks of 1,000 bytes (POST /chunked1m), framed in one write.
bool send_chunked_1m(int fd);
/// `bytes` of OpenAI-style SSE chunks, then [DONE] (POST /sse100m).
bool send_firehose(int fd, std::uint64_t bytes, const std::atomic<bool>& stopping);
/// `bytes` of one 49-byte event over and over, then [DONE] (POST /sse49).
bool send_small_events(int fd, std::uint64_t bytes, const std::atomic<bool>& stopping);

}  // namespace nous::http::mock
