#pragma once
// An in-memory Transport behind the seam of lib/http/transport/transport.hpp:
// the exchange, the pool and the streams run over it as over a socket, while
// a script decides what each call does. It fragments the response (at most
// `max_read` bytes per read), and fails I/O call number N (1-based, counting
// connects, writes and reads together) with an error, a short write, an EOF,
// a reset, or a stall past the deadline. Fault loops iterate N = 1, 2, ...
// until the operation succeeds.

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "transport/transport.hpp"

namespace nous::test {

using nous::http::detail::Clock;
using nous::http::detail::ConnectTimings;
using nous::http::detail::Deadlines;
using nous::http::detail::IoResult;
using nous::http::detail::IoStatus;

enum class Fault { none, error, short_write, eof, reset, stall };

/// Shared by every transport of one fake origin: the script, the step counter,
/// and what the client wrote.
struct MemoryOrigin {
    std::string response;            ///< bytes every connection answers with, per request
    std::size_t max_read = 1 << 20;  ///< fragment size of reads
    Fault fault = Fault::none;
    std::uint64_t fail_at = 0;  ///< the step that fails (0: none)
    std::atomic<std::uint64_t> steps{0};
    std::atomic<std::uint64_t> connects{0};
    std::atomic<int> open_transports{0};
    std::mutex mutex;
    std::string written;  ///< guarded by mutex: everything clients wrote

    /// Counts a step; the fault to apply at it.
    Fault step() {
        const auto n = ++steps;
        return n == fail_at ? fault : Fault::none;
    }
};

class MemoryTransport final : public nous::http::detail::Transport {
  public:
    explicit MemoryTransport(std::shared_ptr<MemoryOrigin> origin) : origin_(std::move(origin)) {
        ++origin_->open_transports;
    }
    ~MemoryTransport() override { --origin_->open_transports; }

    IoResult write_all(std::string_view head, std::string_view body, const Deadlines& deadlines,
                       const nous::http::CancelToken* cancel) override {
        switch (origin_->step()) {
            case Fault::none:
                break;
            case Fault::error:
                return {IoStatus::failed, 0, "injected write error"};
            case Fault::short_write: {
                std::lock_guard lock(origin_->mutex);
                origin_->written.append(head.substr(0, head.size() / 2));
                return {IoStatus::reset, head.size() / 2, "injected short write, then reset"};
            }
            case Fault::eof:
            case Fault::reset:
                return {IoStatus::reset, 0, "injected reset on write"};
            case Fault::stall:
                return stall(deadlines, cancel);
        }
        std::lock_guard lock(origin_->mutex);
        origin_->written.append(head);
        origin_->written.append(body);
        // A complete request earns one response (no pipelining: one at a time).
        pending_ += origin_->response;
        return {};
    }

    IoResult read_some(char* buffer, std::size_t n, const Deadlines& deadlines,
                       const nous::http::CancelToken* cancel) override {
        if (interrupted_.load() || (cancel && cancel->cancelled()))
            return {IoStatus::cancelled, 0, "cancelled"};
        switch (origin_->step()) {
            case Fault::none:
                break;
            case Fault::error:
                return {IoStatus::failed, 0, "injected read error"};
            case Fault::short_write:
                break;  // only writes are short
            case Fault::eof:
                return {IoStatus::eof, 0, "injected EOF"};
            case Fault::reset:
                return {IoStatus::reset, 0, "injected reset"};
            case Fault::stall:
                return stall(deadlines, cancel);
        }
        if (pending_.empty()) return {IoStatus::eof, 0, "script ended"};
        const std::size_t k = std::min({n, origin_->max_read, pending_.size()});
        std::copy_n(pending_.data(), k, buffer);
        pending_.erase(0, k);
        return {IoStatus::ok, k, {}};
    }

    bool probe_alive() override { return pending_.empty() && !interrupted_.load(); }
    void interrupt() noexcept override { interrupted_.store(true); }

  private:
    /// A stall lasts until the deadline that bounds this call, or a cancel.
    IoResult stall(const Deadlines& deadlines, const nous::http::CancelToken* cancel) {
        const auto limit = std::min(deadlines.total_by, Clock::now() + deadlines.idle);
        while (Clock::now() < limit) {
            if (interrupted_.load() || (cancel && cancel->cancelled()))
                return {IoStatus::cancelled, 0, "cancelled"};
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return {deadlines.total_by <= limit ? IoStatus::timeout_total : IoStatus::timeout_read, 0,
                "stalled"};
    }

    std::shared_ptr<MemoryOrigin> origin_;
    std::string pending_;  ///< response bytes not yet read
    std::atomic<bool> interrupted_{false};
};

class MemoryConnector final : public nous::http::detail::Connector {
  public:
    explicit MemoryConnector(std::shared_ptr<MemoryOrigin> origin) : origin_(std::move(origin)) {}
    nous::http::Result<std::unique_ptr<nous::http::detail::Transport>> connect(
        const Deadlines& deadlines, const nous::http::CancelToken* cancel,
        ConnectTimings&) override {
        ++origin_->connects;
        switch (origin_->step()) {
            case Fault::none:
            case Fault::short_write:
                break;
            case Fault::error:
            case Fault::eof:
            case Fault::reset:
                return nous::http::Error(nous::http::ErrorCode::connect_failed,
                                         "injected connect failure");
            case Fault::stall: {
                const auto limit = deadlines.connect_limit();
                while (Clock::now() < limit) {
                    if (cancel && cancel->cancelled())
                        return nous::http::Error(nous::http::ErrorCode::cancelled,
                                                 "cancelled while connecting");
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                return nous::http::Error(deadlines.connect_timeout_code(),
                                         "injected connect stall");
            }
        }
        return std::unique_ptr<nous::http::detail::Transport>(
            std::make_unique<MemoryTransport>(origin_));
    }

  private:
    std::shared_ptr<MemoryOrigin> origin_;
};

}  // namespace nous::test
