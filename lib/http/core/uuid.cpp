// Idempotency-Keys: UUID v4 from the kernel's randomness.

#include "core/uuid.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <random>

namespace nous::http::detail {

namespace {

/// No getrandom (seccomp, very old kernel): std::random_device reads
/// /dev/urandom, also fresh in every process. Out of line because the device
/// is a 5 KB object: inlined, its frame would touch one more stack page on
/// every stream's thread (a page of resident memory per stream) for a path
/// that almost never runs.
[[gnu::noinline, gnu::cold]] void random_bytes_from_device(unsigned char* bytes, std::size_t n) {
    std::random_device device;
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(device());
}

/// 16 bytes from the kernel. Not a seeded engine: a process-wide or
/// thread_local engine is copied into a fork()ed child, and parent and child
/// then draw the same keys for different requests.
void random_bytes(unsigned char (&bytes)[16]) {
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EINTR) {
            random_bytes_from_device(bytes + got, sizeof bytes - got);
            return;
        }
    }
}

}  // namespace

std::string uuid_v4() {
    unsigned char bytes[16];
    random_bytes(bytes);
    bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);  // version 4
    bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += hex[bytes[i] >> 4];
        out += hex[bytes[i] & 15];
    }
    return out;
}

}  // namespace nous::http::detail
