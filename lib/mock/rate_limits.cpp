// The mock's per-key limits (rate_limits.hpp).

#include "rate_limits.hpp"

namespace nous::http::mock {

bool RateLimiter::admit(const std::string& key, std::int64_t input_tokens,
                        std::int64_t output_tokens, LimitState& state) {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::int64_t minute = duration_cast<minutes>(now.time_since_epoch()).count();
    state.reset = system_clock::time_point(minutes(minute + 1));
    if (rpm_ == 0 && tpm_ == 0) return true;  // unlimited: fixed counts, real resets
    std::lock_guard lock(mutex_);
    Window& w = windows_[key];
    if (w.minute != minute) w = Window{minute, 0, 0};
    const bool room =
        (rpm_ == 0 || w.requests + 1 <= rpm_) && (tpm_ == 0 || w.tokens + input_tokens <= tpm_);
    if (room) {
        ++w.requests;
        w.tokens += input_tokens + output_tokens;
    }
    if (rpm_ != 0) {
        state.requests_limit = rpm_;
        state.requests_remaining = std::max<std::int64_t>(0, rpm_ - w.requests);
    }
    if (tpm_ != 0) {
        state.tokens_limit = tpm_;
        state.tokens_remaining = std::max<std::int64_t>(0, tpm_ - w.tokens);
    }
    return room;
}

std::string credential_of(const MockRequest& request) {
    for (const char* name : {"authorization", "x-api-key", "x-goog-api-key", "api-key"})
        if (auto value = request.header(name)) return *value;
    const std::string& target = request.target;
    for (const char* param : {"?key=", "&key="}) {
        const auto at = target.find(param);
        if (at == std::string::npos) continue;
        const auto start = at + 5;
        return target.substr(start, target.find('&', start) - start);
    }
    return "";
}

}  // namespace nous::http::mock
