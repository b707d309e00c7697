// Process-wide counters of sends, receives and pool events (tests, benchmarks).

#include "transport/io_counters.hpp"

#include <atomic>

namespace nous::http::detail {

namespace {
std::atomic<std::uint64_t> g_sends{0}, g_recvs{0};
}
IoCounters io_counters() noexcept { return {g_sends.load(), g_recvs.load()}; }
void count_send() noexcept { g_sends.fetch_add(1, std::memory_order_relaxed); }
void count_recv() noexcept { g_recvs.fetch_add(1, std::memory_order_relaxed); }

}  // namespace nous::http::detail
