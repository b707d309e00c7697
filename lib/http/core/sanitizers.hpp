// Whether this build runs under a sanitizer, in one place: the code that
// bypasses glibc for speed (transport/plain_syscalls.hpp) or sizes a
// thread's stack for what it runs (stream/reader_thread.cpp) keeps glibc's
// behaviour there, where the sanitizer needs it.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NOUS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NOUS_SANITIZED 1
#endif
#endif
