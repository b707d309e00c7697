// A stream's reader thread: std::thread with a stack sized for what the
// reader runs (limits::reader_stack_bytes). std::thread takes no attributes,
// and the process-wide default (pthread_setattr_default_np) belongs to the
// application.
#pragma once

#include <pthread.h>

#include <functional>
#include <memory>
#include <system_error>

#include "core/limits.hpp"
#include "core/sanitizers.hpp"

namespace nous::http::detail {

class ReaderThread {
  public:
    ReaderThread() = default;
    ReaderThread(const ReaderThread&) = delete;
    ReaderThread& operator=(const ReaderThread&) = delete;
    /// Joined by its owner (join()) before it is destroyed, as a std::thread.
    ~ReaderThread() = default;

    /// Starts `body` on a new thread. Throws std::system_error when the
    /// thread cannot be had (EAGAIN), as std::thread does.
    void start(std::function<void()> body) {
        auto owned = std::make_unique<std::function<void()>>(std::move(body));
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
#ifndef NOUS_SANITIZED
        pthread_attr_setstacksize(&attributes, limits::reader_stack_bytes);
#endif
        const int failed = pthread_create(&thread_, &attributes, &trampoline, owned.get());
        pthread_attr_destroy(&attributes);
        if (failed) throw std::system_error(failed, std::generic_category(), "reader thread");
        owned.release();  // the thread's now
        started_ = true;
    }

    void join() noexcept {
        if (!started_) return;
        pthread_join(thread_, nullptr);
        started_ = false;
    }

  private:
    static void* trampoline(void* argument) {
        std::unique_ptr<std::function<void()>> body(static_cast<std::function<void()>*>(argument));
        (*body)();
        return nullptr;
    }

    pthread_t thread_{};
    bool started_ = false;
};

}  // namespace nous::http::detail
