#pragma once
// A real redis-server (Debian's, installed by make deps) on a free loopback
// port for one test: started, waited for by its own "Ready to accept
// connections" line (no sleep), killed when done. No persistence, no config
// file. A missing redis-server fails the test: it is never skipped.

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace nous::test {

class RedisServer {
  public:
    /// `extra`: more redis-server arguments (e.g. {"--requirepass", "pw"}).
    explicit RedisServer(std::vector<std::string> extra = {}) : extra_(std::move(extra)) {
        start();
    }
    ~RedisServer() { kill(); }
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    int port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
    /// SIGSTOP / SIGCONT: a Redis that accepts connections but answers nothing.
    void pause() { ::kill(pid_, SIGSTOP); }
    void resume() { ::kill(pid_, SIGCONT); }
    /// SIGKILL, as a crash would: no goodbye to its clients.
    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGCONT);
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
        if (out_ >= 0) ::close(out_);
        out_ = -1;
    }

  private:
    static int free_port() {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        ::close(fd);
        return ntohs(a.sin_port);
    }

    void start() {
        if (::access("/usr/bin/redis-server", X_OK) != 0)
            throw std::runtime_error("redis-server is not installed (make deps installs it)");
        port_ = free_port();
        int pipe_fds[2];
        if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(pipe_fds[1], 1);
            ::close(pipe_fds[0]);
            const std::string port = std::to_string(port_);
            std::vector<const char*> args = {
                "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no",     "--loglevel", "notice"};
            for (const std::string& a : extra_) args.push_back(a.c_str());
            args.push_back(nullptr);
            ::execv("/usr/bin/redis-server", const_cast<char* const*>(args.data()));
            ::_exit(127);
        }
        ::close(pipe_fds[1]);
        out_ = pipe_fds[0];
        std::string seen;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (seen.find("Ready to accept connections") == std::string::npos) {
            pollfd p{out_, POLLIN, 0};
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
                throw std::runtime_error("redis-server did not start: " + seen);
            char buffer[4096];
            const ssize_t n = ::read(out_, buffer, sizeof buffer);
            if (n <= 0) throw std::runtime_error("redis-server exited: " + seen);
            seen.append(buffer, static_cast<std::size_t>(n));
        }
    }

    std::vector<std::string> extra_;
    int port_ = 0;
    pid_t pid_ = -1;
    int out_ = -1;
};

}  // namespace nous::test
