// A fleet: several nouscli processes share one deployment's per-minute
// limit through a real redis-server. Against a mock enforcing --rpm R on
// that deployment's key, together they send it at most R requests in each
// minute window, and every call succeeds through the second deployment;
// without the shared state the same run sends it more than R (each process
// allows all of it).

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <mutex>

#include "cli_run.hpp"
#include "nous/mock/mock_server.hpp"
#include "redis_server.hpp"

using namespace nous::http;
using namespace nous::test;

namespace {

constexpr int kLimit = 5, kProcesses = 4, kCallsEach = 6;

struct Fleet {
    MockServer limited, spare;
    std::mutex mutex;
    std::map<std::int64_t, int> limited_by_minute;  ///< arrivals at the limited deployment
    Fleet() : limited(limited_options()) {
        limited.set_handler([this](const MockRequest&, MockResponse&) {
            const auto minute = std::chrono::duration_cast<std::chrono::minutes>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
            std::lock_guard lock(mutex);
            ++limited_by_minute[minute];
            return false;  // the mock answers, its --rpm included
        });
        limited.start();
        spare.start();
    }
    static MockServerOptions limited_options() {
        MockServerOptions o;
        o.rpm = kLimit;
        return o;
    }
    /// Runs the fleet with `shared_state` ("" for none): how many calls failed.
    int run(const std::string& shared_state) {
        const std::string file = "/tmp/nous-fleet-" + std::to_string(::getpid()) + ".json";
        std::ofstream(file)
            << R"({"strategy":"weighted",)"
            << (shared_state.empty() ? "" : R"("shared_state":")" + shared_state + "\",")
            << R"("deployments":[{"name":"limited","provider":"openai","base_url":")"
            << limited.base_url() << R"(/v1","model":"mock-1","api_key_env":"FLEET_KEY_A","rpm":)"
            << kLimit << R"(,"weight":1},{"name":"spare","provider":"openai","base_url":")"
            << spare.base_url()
            << R"(/v1","model":"mock-1","api_key_env":"FLEET_KEY_B","weight":0}]})";
        const std::string one_call = quote(NOUSCLI_PATH) + " chat hi --no-stream --deployments " +
                                     file + " >/dev/null 2>&1 || echo failed";
        std::string script = "export FLEET_KEY_A=sk-a FLEET_KEY_B=sk-b; ";
        for (int p = 0; p < kProcesses; ++p)
            script += "(for i in $(seq " + std::to_string(kCallsEach) + "); do " + one_call +
                      "; done) & ";
        script += "wait";
        FILE* out = ::popen(("/bin/sh -c " + quote(script)).c_str(), "r");
        REQUIRE(out);
        int failed = 0;
        char line[256];
        while (std::fgets(line, sizeof line, out)) ++failed;
        ::pclose(out);
        std::remove(file.c_str());
        return failed;
    }
    int most_in_a_minute() {
        std::lock_guard lock(mutex);
        int most = 0;
        for (const auto& [minute, n] : limited_by_minute) most = std::max(most, n);
        return most;
    }
    int total() {
        std::lock_guard lock(mutex);
        int all = 0;
        for (const auto& [minute, n] : limited_by_minute) all += n;
        return all;
    }
};

}  // namespace

TEST_CASE("a fleet sharing Redis keeps a deployment's rpm, and without it the fleet exceeds it") {
    RedisServer redis;
    {
        Fleet fleet;
        CHECK(fleet.run(redis.url()) == 0);  // every call answered
        CHECK(fleet.most_in_a_minute() <= kLimit);
        CHECK(fleet.total() >= 1);
    }
    {
        Fleet fleet;
        CHECK(fleet.run("") == 0);  // still answered, through the spare after the 429s
        CHECK(fleet.most_in_a_minute() > kLimit);
    }
}
