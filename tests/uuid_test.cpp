// core/uuid: the Idempotency-Key generator.

#include "core/uuid.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

using nous::http::detail::uuid_v4;

TEST_CASE("uuid_v4 is a version 4, RFC 4122 variant UUID in lower-case hex") {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::string id = uuid_v4();
        REQUIRE(id.size() == 36);
        CHECK(id[8] == '-');
        CHECK(id[13] == '-');
        CHECK(id[14] == '4');
        CHECK(std::string("89ab").find(id[19]) != std::string::npos);
        CHECK(id.find_first_not_of("0123456789abcdef-") == std::string::npos);
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
}

TEST_CASE("regression: a fork()ed child drew the same Idempotency-Keys as its parent") {
    uuid_v4();  // the parent has drawn before it forks, as a server that forks workers has
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::string keys;
        for (int i = 0; i < 4; ++i) keys += uuid_v4();
        const bool ok =
            ::write(pipe_fds[1], keys.data(), keys.size()) == static_cast<ssize_t>(keys.size());
        ::_exit(ok ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    std::string parent;
    for (int i = 0; i < 4; ++i) parent += uuid_v4();
    std::string from_child(parent.size(), '\0');
    std::size_t got = 0;
    while (got < from_child.size()) {
        const ssize_t n = ::read(pipe_fds[0], from_child.data() + got, from_child.size() - got);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(got == from_child.size());
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k)
            CHECK(parent.substr(36 * i, 36) != from_child.substr(36 * k, 36));
}
