#pragma once
// Shared by the benchmarks: the process's CPU time, its peak RSS and its reset.

#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace nous::bench {

/// This process's CPU time so far, user + system, in seconds (getrusage).
inline double process_cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

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
