#pragma once
// A loopback TCP proxy that misbehaves on purpose, between a client and a
// test server: it delays every write, splits the stream into writes of a few
// bytes (1: byte by byte), resets both sides once K bytes have passed in
// total, or stalls from byte K on. It never duplicates or reorders a byte.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace nous::test {

struct ChaosSettings {
    std::size_t split = 0;               ///< max bytes per forwarded write (0: as read)
    std::chrono::milliseconds delay{0};  ///< before every forwarded write
    std::uint64_t reset_at = 0;          ///< reset after this many bytes in total (0: never)
    std::uint64_t stall_at = 0;          ///< forward nothing more from this byte on (0: never)
};

class ChaosProxy {
  public:
    ChaosProxy(std::uint16_t target_port, ChaosSettings settings);
    ~ChaosProxy();
    std::uint16_t port() const { return port_; }
    std::string url(const std::string& scheme_host = "http://127.0.0.1",
                    const std::string& path = "/") const {
        return scheme_host + ":" + std::to_string(port_) + path;
    }
    /// Bytes forwarded so far, both directions, every connection.
    std::uint64_t forwarded() const { return forwarded_.load(); }
    std::uint64_t connections() const { return accepted_.load(); }
    /// Changes what the next connections get (existing ones keep theirs).
    void set(ChaosSettings settings);

  private:
    void relay(int client, ChaosSettings settings);

    std::uint16_t target_port_;
    std::mutex mutex_;
    ChaosSettings settings_;         ///< guarded by mutex_
    std::list<std::thread> relays_;  ///< guarded by mutex_
    std::list<int> open_fds_;        ///< guarded by mutex_
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> forwarded_{0};
    std::atomic<std::uint64_t> accepted_{0};
    std::thread acceptor_;
};

}  // namespace nous::test
