#pragma once
// Shared by the benchmarks: nouscli's mock server in a child process, so that
// its CPU is not the measured process's. Fork before the first thread of the
// benchmark starts (a child of a threaded process may find locks held).

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "nous/mock/mock_server.hpp"

namespace nous::bench {

struct MockChild {
    pid_t pid = -1;
    std::string url;  ///< http://127.0.0.1:PORT
    /// Ends the child (it also ends when the benchmark does).
    void stop() {
        if (pid <= 0) return;
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

/// Starts a mock with `options` in a child; exits the benchmark when it cannot.
inline MockChild mock_in_child(const nous::http::MockServerOptions& options = {}) {
    int pipefd[2];
    if (::pipe(pipefd) != 0) std::exit(1);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(pipefd[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        nous::http::MockServer server(options);
        server.start();
        const std::uint16_t port = server.port();
        (void)!::write(pipefd[1], &port, sizeof port);
        ::pause();
        _exit(0);
    }
    ::close(pipefd[1]);
    std::uint16_t port = 0;
    if (::read(pipefd[0], &port, sizeof port) != sizeof port) std::exit(1);
    ::close(pipefd[0]);
    return {child, "http://127.0.0.1:" + std::to_string(port)};
}

}  // namespace nous::bench
