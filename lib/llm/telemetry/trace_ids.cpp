// Trace and span ids, and the W3C traceparent (trace_ids.hpp).

#include "telemetry/trace_ids.hpp"

#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <random>

namespace nous::llm::detail {

namespace {

/// A random seed from the kernel (std::random_device where getrandom
/// fails).
std::uint64_t fresh_seed() noexcept {
    std::uint64_t seed = 0;
    if (::getrandom(&seed, sizeof seed, 0) == static_cast<ssize_t>(sizeof seed)) return seed;
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

/// The process's seed. A child of fork() draws a seed of its own (the
/// handler below): with the parent's seed and counter it drew the parent's
/// next ids, two spans with one id.
std::atomic<std::uint64_t> g_seed{0};
std::atomic<std::uint64_t> g_counter{0};

std::uint64_t seed() noexcept {
    static const bool seeded = [] {
        g_seed.store(fresh_seed());
        ::pthread_atfork(nullptr, nullptr, [] { g_seed.store(fresh_seed()); });
        return true;
    }();
    (void)seeded;
    return g_seed.load(std::memory_order_relaxed);
}

/// Ids: the process's seed stepped by splitmix64, unique per id and random
/// enough for W3C's trace-id without a generator per thread.
std::uint64_t next_random() {
    std::uint64_t z = seed() + 0x9e3779b97f4a7c15ULL * (g_counter.fetch_add(1) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
    std::array<std::uint8_t, N> id{};
    for (std::size_t i = 0; i < N; i += 8) {
        std::uint64_t r = next_random();
        for (std::size_t j = 0; j < 8 && i + j < N; ++j)
            id[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
    }
    return id;
}

}  // namespace

TraceId random_trace_id() { return random_id<16>(); }
SpanId random_span_id() { return random_id<8>(); }

/// A W3C traceparent, version 00: "00-" 32 hex "-" 16 hex "-" 2 hex, the ids
/// not all zero. False for anything else (the span is then a root).
bool parse_traceparent(std::string_view text, TraceId& trace, SpanId& span, bool& sampled) {
    if (text.size() != 55 || text.substr(0, 3) != "00-" || text[35] != '-' || text[52] != '-')
        return false;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;  // upper case is not a traceparent
    };
    auto bytes = [&](std::string_view hex, std::uint8_t* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
            if (hi < 0 || lo < 0) return false;
            out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
        }
        return true;
    };
    std::uint8_t flags = 0;
    if (!bytes(text.substr(3, 32), trace.data(), 16) ||
        !bytes(text.substr(36, 16), span.data(), 8) || !bytes(text.substr(53, 2), &flags, 1))
        return false;
    if (trace == TraceId{} || span == SpanId{}) return false;
    sampled = flags & 1;
    return true;
}

}  // namespace nous::llm::detail
