#pragma once
// Shared by the benchmarks: the process's peak RSS and its reset.

#include <cstdint>
#include <fstream>
#include <string>

namespace nous::bench {

/// VmHWM of this process in KiB.
inline long peak_rss_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    return 0;
}

/// Bytes allocated by the whole process so far (every operator new), in the
/// benchmarks linking bench/alloc_counter.cpp: the memory column, as Benchee
/// reports it (bytes allocated per iteration).
std::uint64_t allocated_bytes() noexcept;

/// VmHWM is process-wide: reset it between measurements.
inline void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace nous::bench
