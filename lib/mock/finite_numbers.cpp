// The mock's check for numbers past a double's range (finite_numbers.hpp).

#include "finite_numbers.hpp"

#include <cmath>
#include <vector>

namespace nous::http::mock {

bool numbers_finite(const rapidjson::Value& value) {
    std::vector<const rapidjson::Value*> pending{&value};
    while (!pending.empty()) {
        const rapidjson::Value& v = *pending.back();
        pending.pop_back();
        if (v.IsDouble()) {
            if (!std::isfinite(v.GetDouble())) return false;
        } else if (v.IsArray()) {
            for (const auto& element : v.GetArray()) pending.push_back(&element);
        } else if (v.IsObject()) {
            for (const auto& member : v.GetObject()) pending.push_back(&member.value);
        }
    }
    return true;
}

}  // namespace nous::http::mock
