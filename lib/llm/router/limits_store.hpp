#pragma once
// Where a router keeps each deployment's per-minute counts, cooldown and
// failure count in the process (nous_llm internal), and the cooldown rule.
// A fleet's router keeps them in Redis (redis_limits.hpp) and mirrors here
// what Redis decided, so that this is its fallback. Each call makes two
// updates: reserve before it is sent, settle after. docs/router.md.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace nous::llm::detail {

using SystemTime = std::chrono::system_clock::time_point;

/// The configured limits of one deployment (0: none).
struct DeploymentLimits {
    std::string name;
    std::int64_t rpm = 0, tpm = 0;
};

/// What reserve() found.
struct Reservation {
    enum class Kind { reserved, no_budget, cooling } kind = Kind::reserved;
    std::int64_t requests_used = 0, tokens_used = 0;  ///< the window's counts after
    SystemTime until{};  ///< cooling: when the cooldown ends; no_budget: the window's end
};

/// How an attempt ended, as the cooldown and the token count need it.
struct Outcome {
    enum class Kind {
        success,  ///< its failure count starts again
        failure,  ///< a cooldown: the hint, else 5 s doubling on each failure in a row up to 5 min
        quota,    ///< cooled until `quota_until`, else 1 h
        neutral,  ///< neither (a request this deployment refused)
    };
    Kind kind = Kind::success;
    std::optional<std::chrono::milliseconds> hint;
    std::optional<SystemTime> quota_until;
    /// The real tokens less the reserved estimate (0 when no usage came back).
    std::int64_t token_correction = 0;
    /// The minute window the reservation was counted in (minute_of its
    /// reserve time): the correction goes there, whenever the call ends; a
    /// window already gone takes none. -1: no reservation to correct.
    std::int64_t window_minute = -1;
};

/// The cooldown an outcome asks for after `failures` in a row (this one
/// included), from `now`: its end.
SystemTime cooldown_end(const Outcome& outcome, std::int64_t failures, SystemTime now);
/// The minute window `now` falls in (minutes since the epoch: the same in every process).
std::int64_t minute_of(SystemTime now);

/// The counts in this process: one small lock per deployment, none shared by all.
class LocalLimits {
  public:
    explicit LocalLimits(std::vector<DeploymentLimits> limits);
    /// A request and `estimate` tokens of deployment `i`'s window, when it
    /// has room and is not cooling down.
    Reservation reserve(std::size_t i, std::int64_t estimate, SystemTime now);
    /// What reserve() would find, changing nothing (for choosing).
    Reservation peek(std::size_t i, std::int64_t estimate, SystemTime now);
    /// The attempt's end: tokens corrected, the failure count and the
    /// cooldown updated (never shortened). Returns the cooldown's end (the
    /// epoch: none).
    SystemTime settle(std::size_t i, const Outcome& outcome, SystemTime now);
    /// What a shared store decided, mirrored here so that a fallback starts from it.
    void mirror(std::size_t i, const Reservation& reservation, std::int64_t estimate,
                SystemTime now);
    void mirror_cooldown(std::size_t i, SystemTime until);

  private:
    struct alignas(64) State {
        std::mutex mutex;
        std::int64_t minute = -1, requests = 0, tokens = 0;
        std::int64_t failures = 0;
        SystemTime cool_until{};
    };
    void roll(State& s, SystemTime now);
    Reservation check(std::size_t i, std::int64_t estimate, SystemTime now, bool take);
    std::vector<DeploymentLimits> limits_;
    std::unique_ptr<State[]> states_;
};

}  // namespace nous::llm::detail
