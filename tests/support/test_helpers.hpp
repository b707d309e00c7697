#pragma once
// Small helpers several test files share.

#include <cstdlib>
#include <string>
#include <vector>

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

}  // namespace nous::test
