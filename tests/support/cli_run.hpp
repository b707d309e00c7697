#pragma once
// Runs nouscli (its path in NOUSCLI_PATH) through /bin/sh, as a user would:
// arguments quoted, stdin from a file, stdout and stderr captured.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nous::test {

struct Run {
    int code = -1;
    std::string out, err;
};

inline std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs nouscli with `args` (each quoted), optional stdin text, through /bin/sh.
inline Run nouscli(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    static std::atomic<int> counter{0};
    std::string base =
        "/tmp/nouscli-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::string cmd = quote(NOUSCLI_PATH);
    for (auto& a : args) cmd += " " + quote(a);
    std::ofstream(base + ".in") << stdin_text;
    cmd += " < " + base + ".in > " + base + ".out 2> " + base + ".err";
    int status = std::system(cmd.c_str());
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    std::remove((base + ".in").c_str());
    std::remove((base + ".out").c_str());
    std::remove((base + ".err").c_str());
    return r;
}

}  // namespace nous::test
