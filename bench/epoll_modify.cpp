// What one EPOLL_CTL_MOD costs as an epoll instance holds more sockets: the
// window's read relay changes a socket's entry twice a token (disarmed
// before its consumer's read, armed after it), in one instance for the
// process (docs/BENCHMARKS.md, "Scale"). N socket pairs are registered
// (EPOLLONESHOT, spread over K instances), then a random one of them is
// modified C times, 1 MiB of a 64 MiB buffer written every 64 calls so that
// the entries and sockets are as cold as a stream's are at its next token.
// Prints one JSON line: µs a call, timed around each call. A socket pair
// takes two descriptors: raise `ulimit -n` past twice --sockets.

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

namespace po = boost::program_options;

int main(int argc, char** argv) {
    int sockets = 10000, instances = 1, calls = 200000;
    po::options_description desc("epoll_modify [options]");
    desc.add_options()("help,h", "show this help")(
        "sockets", po::value(&sockets), "sockets registered (10000; two descriptors each)")(
        "instances", po::value(&instances), "epoll instances they are spread over (1)")(
        "calls", po::value(&calls), "EPOLL_CTL_MOD calls timed (200000)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const std::exception& e) {
        std::cerr << "epoll_modify: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help") || sockets <= 0 || instances <= 0 || calls <= 0) {
        std::cout << desc;
        return vm.count("help") ? 0 : 2;
    }
    std::vector<int> epolls(static_cast<std::size_t>(instances));
    for (int& e : epolls) e = ::epoll_create1(EPOLL_CLOEXEC);
    std::vector<int> watched;
    for (int i = 0; i < sockets; ++i) {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
            std::perror("epoll_modify: socketpair (raise ulimit -n)");
            return 1;
        }
        watched.push_back(pair[0]);
        epoll_event event{};
        event.events = EPOLLIN | EPOLLONESHOT;
        event.data.u64 = static_cast<std::uint64_t>(i);
        ::epoll_ctl(epolls[static_cast<std::size_t>(i % instances)], EPOLL_CTL_ADD, pair[0],
                    &event);
    }
    std::vector<char> cold(64 << 20);
    std::mt19937 random(1);
    double total_us = 0;
    for (int call = 0; call < calls; ++call) {
        const int i = static_cast<int>(random() % static_cast<unsigned>(sockets));
        if (call % 64 == 0) std::memset(cold.data() + (random() % 63) * (1 << 20), call, 1 << 20);
        epoll_event event{};
        // Armed and disarmed in turn, as the relay does.
        event.events = (call & 1) ? (EPOLLIN | EPOLLONESHOT) : EPOLLONESHOT;
        event.data.u64 = static_cast<std::uint64_t>(i);
        const auto start = std::chrono::steady_clock::now();
        ::epoll_ctl(epolls[static_cast<std::size_t>(i % instances)], EPOLL_CTL_MOD,
                    watched[static_cast<std::size_t>(i)], &event);
        total_us +=
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count();
    }
    std::printf("{\"sockets\":%d,\"instances\":%d,\"calls\":%d,\"us_per_call\":%.3f}\n", sockets,
                instances, calls, total_us / calls);
    return 0;
}
