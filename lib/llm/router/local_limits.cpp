// A router's counts in the process (limits_store.hpp), and the cooldown rule
// every store shares.

#include <algorithm>

#include "router/limits_store.hpp"

namespace nous::llm::detail {

namespace {
constexpr std::chrono::milliseconds kFirstCooldown{5'000}, kLongestCooldown{300'000};
constexpr std::chrono::hours kQuotaCooldown{1};
}  // namespace

std::int64_t minute_of(SystemTime now) {
    return std::chrono::duration_cast<std::chrono::minutes>(now.time_since_epoch()).count();
}

SystemTime cooldown_end(const Outcome& outcome, std::int64_t failures, SystemTime now) {
    switch (outcome.kind) {
        case Outcome::Kind::quota:
            return outcome.quota_until && *outcome.quota_until > now ? *outcome.quota_until
                                                                     : now + kQuotaCooldown;
        case Outcome::Kind::failure: {
            if (outcome.hint) return now + *outcome.hint;
            auto wait = kFirstCooldown;
            for (std::int64_t i = 1; i < failures && wait < kLongestCooldown; ++i) wait *= 2;
            return now + std::min(wait, kLongestCooldown);
        }
        default:
            return SystemTime{};
    }
}

LocalLimits::LocalLimits(std::vector<DeploymentLimits> limits)
    : limits_(std::move(limits)), states_(new State[limits_.size()]) {}

void LocalLimits::roll(State& s, SystemTime now) {
    const std::int64_t minute = minute_of(now);
    if (s.minute != minute) {
        s.minute = minute;
        s.requests = 0;
        s.tokens = 0;
    }
}

Reservation LocalLimits::peek(std::size_t i, std::int64_t estimate, SystemTime now) {
    return check(i, estimate, now, false);
}

Reservation LocalLimits::reserve(std::size_t i, std::int64_t estimate, SystemTime now) {
    return check(i, estimate, now, true);
}

Reservation LocalLimits::check(std::size_t i, std::int64_t estimate, SystemTime now, bool take) {
    State& s = states_[i];
    const DeploymentLimits& l = limits_[i];
    std::lock_guard lock(s.mutex);
    roll(s, now);
    Reservation r;
    if (s.cool_until > now) {
        r.kind = Reservation::Kind::cooling;
        r.until = s.cool_until;
    } else if ((l.rpm > 0 && s.requests + 1 > l.rpm) ||
               (l.tpm > 0 && s.tokens + estimate > l.tpm)) {
        r.kind = Reservation::Kind::no_budget;
        r.until = SystemTime(std::chrono::minutes(s.minute + 1));
    } else if (take) {
        ++s.requests;
        s.tokens += estimate;
    }
    r.requests_used = s.requests;
    r.tokens_used = s.tokens;
    return r;
}

SystemTime LocalLimits::settle(std::size_t i, const Outcome& outcome, SystemTime now) {
    State& s = states_[i];
    std::lock_guard lock(s.mutex);
    // The correction belongs to the window the reservation was counted in:
    // applied to a later one, it would hand that window the unused estimate
    // as budget it never had (and leave the earlier one holding it all).
    if (outcome.window_minute == s.minute)
        s.tokens = std::max<std::int64_t>(0, s.tokens + outcome.token_correction);
    roll(s, now);
    if (outcome.kind == Outcome::Kind::success) s.failures = 0;
    if (outcome.kind == Outcome::Kind::failure || outcome.kind == Outcome::Kind::quota) {
        ++s.failures;
        // A later, shorter hint never shortens a running cooldown.
        s.cool_until = std::max(s.cool_until, cooldown_end(outcome, s.failures, now));
    }
    return s.cool_until > now ? s.cool_until : SystemTime{};
}

void LocalLimits::mirror(std::size_t i, const Reservation& reservation, std::int64_t,
                         SystemTime now) {
    State& s = states_[i];
    std::lock_guard lock(s.mutex);
    roll(s, now);
    s.requests = reservation.requests_used;
    s.tokens = reservation.tokens_used;
    if (reservation.kind == Reservation::Kind::cooling)
        s.cool_until = std::max(s.cool_until, reservation.until);
}

void LocalLimits::mirror_cooldown(std::size_t i, SystemTime until) {
    State& s = states_[i];
    std::lock_guard lock(s.mutex);
    s.cool_until = std::max(s.cool_until, until);
}

}  // namespace nous::llm::detail
