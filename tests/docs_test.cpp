// The docs state every default once, in docs/configuration.md: a default
// changed in code alone, or a Config key missing from the page, fails here.

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "nous/http/options.hpp"

using namespace nous::http;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trim(std::string s) {
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

/// Each table row of the page by the name in its first column (an Options
/// field) or, when that is "–", by the Config field of its second: its cells.
std::map<std::string, std::vector<std::string>> rows_of(const std::string& page) {
    std::map<std::string, std::vector<std::string>> rows;
    std::istringstream in(page);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| ", 0) != 0) continue;
        std::vector<std::string> cells;
        std::size_t at = 1;
        while (at < line.size()) {
            const std::size_t bar = line.find('|', at);
            if (bar == std::string::npos) break;
            cells.push_back(trim(line.substr(at, bar - at)));
            at = bar + 1;
        }
        if (cells.size() < 3) continue;
        std::string name = cells[0] != "–" ? cells[0] : cells[1].substr(0, cells[1].find(' '));
        if (name.size() > 2 && name.front() == '`') name = name.substr(1, name.find('`', 1) - 1);
        rows[name] = cells;
    }
    return rows;
}

std::string text_of(Milliseconds ms) {
    return ms.count() % 1000 == 0 ? std::to_string(ms.count() / 1000) + " s"
                                  : std::to_string(ms.count()) + " ms";
}
std::string text_of(std::size_t n) {
    if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + " MiB";
    if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
    return std::to_string(n);
}
std::string text_of(int n) { return std::to_string(n); }

}  // namespace

TEST_CASE("docs/configuration.md states every defaults:: value as the code has it") {
    const auto rows = rows_of(slurp(std::string(NOUS_DOCS) + "/configuration.md"));
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"connect_timeout", text_of(defaults::connect_timeout)},
        {"read_timeout", text_of(defaults::read_timeout)},
        {"max_retries", text_of(defaults::max_retries)},
        {"max_response_bytes", text_of(defaults::max_response_bytes)},
        {"max_error_body_bytes", text_of(defaults::max_error_body_bytes)},
        {"pool_max_per_origin", text_of(defaults::pool_max_per_origin)},
        {"pool_max_idle_per_origin", text_of(defaults::pool_max_idle_per_origin)},
        {"pool_idle_timeout", text_of(defaults::pool_idle_timeout)},
        {"window_high_bytes", text_of(defaults::window_high_bytes)},
        {"window_low_bytes", text_of(defaults::window_low_bytes)},
        {"window_max_park", text_of(defaults::window_max_park)},
        {"max_event_bytes", text_of(defaults::max_event_bytes)},
        {"max_concurrent_streams", text_of(defaults::max_concurrent_streams)},
    };
    for (const auto& [name, value] : expected) {
        INFO(name << " should be documented as " << value);
        auto row = rows.find(name);
        REQUIRE(row != rows.end());
        CHECK(row->second[2] == value);
    }
}

TEST_CASE("docs/configuration.md names every NOUS_HTTP_CONFIG key") {
    const std::string page = slurp(std::string(NOUS_DOCS) + "/configuration.md");
    int keys = 0;
    detail::for_each_config_field([&](const char* key, auto) {
        INFO(key);
        CHECK(page.find(std::string("/ `") + key + "`") != std::string::npos);
        ++keys;
    });
    CHECK(keys == 14);
}
