#pragma once
// What the CPU offers the embeddings readers' vector paths (nous_llm
// internal): asked once a process.

namespace nous::llm::detail {

#if defined(__x86_64__)
inline bool has_avx2() noexcept {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
#endif

}  // namespace nous::llm::detail
