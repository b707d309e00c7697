#pragma once
// Small helpers several test files share.

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"

namespace nous::test {

/// Sets environment variables for a scope (tests set them before calls start
/// their threads), and unsets them after.
struct ScopedEnv {
    std::vector<std::string> names;
    void set(const char* name, const std::string& value) {
        ::setenv(name, value.c_str(), 1);
        names.emplace_back(name);
    }
    ~ScopedEnv() {
        for (auto& n : names) ::unsetenv(n.c_str());
    }
};

/// Every item of a stream until its end.
inline std::vector<nous::http::StreamItem> drain(nous::http::Stream& s) {
    std::vector<nous::http::StreamItem> items;
    while (auto item = s.next()) items.push_back(std::move(*item));
    return items;
}

/// Options with the retry policy off (tests count requests).
inline nous::http::Options no_retry() {
    nous::http::Options o;
    o.max_retries = 0;
    return o;
}

/// The value of header `name` in a request head (case-insensitive), or "".
inline std::string header_of(const std::string& head, const std::string& name) {
    std::regex re("\r\n" + name + ": ([^\r]*)\r\n", std::regex::icase);
    std::smatch m;
    return std::regex_search(head, m, re) ? m[1].str() : std::string();
}

/// Runs `body` in a forked child and returns its exit status: for tests that
/// change process-wide limits (RLIMIT_NOFILE, RLIMIT_AS).
inline int in_child(const std::function<int()>& body) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status)
                             : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// The system call thread `tid` of this process sleeps in, as /proc shows
/// it, or -1 ("running" while it runs).
inline long sleeping_in(pid_t tid) {
    std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long number = -1;
    return file >> number ? number : -1;
}

/// How many times thread `tid` of this process went to sleep (its voluntary
/// context switches, as /proc counts them), or -1.
inline long sleeps_of(pid_t tid) {
    std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
    return -1;
}

inline int highest_open_fd() {
    int highest = 0;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        while (dirent* e = ::readdir(dir)) highest = std::max(highest, std::atoi(e->d_name));
        ::closedir(dir);
    }
    return highest;
}

/// Unblocks SIGPIPE for the scope (libPocoFoundation blocks it in the main
/// thread when it loads; an application may unblock it), so that only our
/// guards stand between a write and the process's death.
struct SigpipeUnblocked {
    sigset_t pipe{}, old{};
    SigpipeUnblocked() {
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_UNBLOCK, &pipe, &old);
    }
    ~SigpipeUnblocked() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
    bool pending() const {
        sigset_t p;
        sigpending(&p);
        return sigismember(&p, SIGPIPE) == 1;
    }
};

}  // namespace nous::test
