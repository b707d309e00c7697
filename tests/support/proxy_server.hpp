#pragma once
// A small HTTP proxy for tests: CONNECT tunnels (for https) and absolute-form
// requests (for http), which it forwards to the origin on a fresh connection.

#include <atomic>
#include <cstdint>
#include <string>

#include "fault_server.hpp"

namespace nous::test {

class ProxyServer {
  public:
    /// `require_auth`: "Basic ..." value demanded in Proxy-Authorization (empty: none).
    explicit ProxyServer(std::string require_auth = "");
    std::uint16_t port() const { return server_.port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
    std::uint64_t connects() const { return connects_.load(); }
    std::uint64_t forwarded() const { return forwarded_.load(); }
    std::string last_request_line() const;

  private:
    void handle(Peer& peer);
    std::string require_auth_;
    std::atomic<std::uint64_t> connects_{0}, forwarded_{0};
    mutable std::mutex mutex_;
    std::string last_line_;
    FaultServer server_;
};

}  // namespace nous::test
