#pragma once
// A fleet's router state in Redis (nous_llm internal): each deployment's
// per-minute counts, cooldown and failure count, updated atomically by one
// Lua script per step (reserve before a call is sent, settle after), so that
// N processes together stay within a deployment's rpm/tpm. Keys, expiry and
// the scripts: docs/router.md, "Shared state". Every command is bounded by
// the timeout; Redis unreachable or slow makes each step answer nullopt (the
// router then uses its local state), logged once per outage, and Redis is
// tried again a second later.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "router/limits_store.hpp"
#include "router/redis_url.hpp"

struct redisContext;
struct redisReply;

namespace nous::llm::detail {

class RedisLimits {
  public:
    /// nullptr, with `error`, for a URL that is not redis://[USER:PASSWORD@]HOST:PORT[/DB].
    /// Connects lazily: an unreachable Redis is a fallback, not an error.
    static std::unique_ptr<RedisLimits> create(const std::string& url,
                                               std::vector<DeploymentLimits> limits,
                                               std::chrono::milliseconds timeout,
                                               std::string& error);
    ~RedisLimits();

    std::optional<Reservation> reserve(std::size_t i, std::int64_t estimate, SystemTime now);
    /// A failure's settle: the cooldown's end Redis holds (the epoch: none),
    /// one round trip. A success's settle (the common case: a token
    /// correction and the failure count cleared) is sent without waiting for
    /// its answer, which the connection's next user reads first: a
    /// successful call costs one round trip, its reserve. nullopt when
    /// Redis could not be reached (a success's: the epoch once sent).
    std::optional<SystemTime> settle(std::size_t i, const Outcome& outcome, SystemTime now);

  private:
    RedisLimits() = default;
    /// A connection from the pool (its unread answers read first) or a new
    /// one; nullptr while Redis is down.
    redisContext* take();
    /// Back to the pool, with `unread` answers still to read on it.
    void give(redisContext* c, int unread = 0);
    /// A command failed on `c`: it is closed, Redis counts as down for a
    /// second, and the first failure of an outage is logged, `why` in
    /// Redis's own words when it `refused` the command with an error reply.
    void failed(redisContext* c, const std::string& why, bool refused = false);
    /// failed() for a command whose answer is `reply` (nullptr: none came).
    void failed_reply(redisContext* c, const redisReply* reply);
    /// A command of the connection set-up (AUTH, SELECT): true when `reply`
    /// is an answer and not an error; else failed() and false.
    bool command_answered(redisContext* c, const redisReply* reply);
    /// A command was answered: Redis is back, if it was down (logged once).
    void answered();
    /// One EVALSHA (loading the script on NOSCRIPT); nullptr on any failure.
    struct Reply;
    std::unique_ptr<Reply> eval(redisContext* c, int script, const std::vector<std::string>& args);
    std::string key(std::size_t i, const char* what) const;

    std::string url_;  ///< as printed: the password redacted
    std::string host_, user_, password_;
    int port_ = 6379, db_ = 0;
    std::chrono::milliseconds timeout_{50};
    std::vector<DeploymentLimits> limits_;
    std::mutex pool_mutex_;
    struct Pooled {
        redisContext* context;
        int unread;  ///< answers of commands sent without waiting
    };
    std::vector<Pooled> pool_;
    std::string shas_[2];  ///< the scripts' SHA1s once loaded (under pool_mutex_)
    std::atomic<std::int64_t> down_until_ms_{0};  ///< steady clock
    std::atomic<bool> down_{false};
};

}  // namespace nous::llm::detail
