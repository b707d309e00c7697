// Every allocation of the process is counted (a replaced global operator
// new), in its own file so that the replacement is never inlined.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "bench_util.hpp"

namespace {
std::atomic<std::uint64_t> g_allocated{0};
}

std::uint64_t nous::bench::allocated_bytes() noexcept {
    return g_allocated.load(std::memory_order_relaxed);
}

void* operator new(std::size_t size) {
    g_allocated.fetch_add(size, std::memory_order_relaxed);
    if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
