// A fleet's router state in Redis (redis_limits.hpp), through hiredis.

#include "router/redis_limits.hpp"

#include <hiredis/hiredis.h>

#include <charconv>

#include "nous/http/log.hpp"

namespace nous::llm::detail {

namespace {

/// KEYS: window, cooldown. ARGV: rpm, tpm, estimate, window ttl (s), now (ms).
/// {0, requests, tokens} reserved; {1, requests, tokens} no budget;
/// {2, cooldown end} cooling down.
constexpr const char* kReserve = R"lua(
local cool = tonumber(redis.call('GET', KEYS[2]) or '0')
if cool > tonumber(ARGV[5]) then return {2, cool, 0} end
local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local rpm, tpm, est = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if (rpm > 0 and r + 1 > rpm) or (tpm > 0 and t + est > tpm) then return {1, r, t} end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', est)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {0, r + 1, t + est}
)lua";

/// KEYS: window, cooldown, failures. ARGV: now (ms), token correction, kind
/// (0 success, 1 failure, 2 quota, 3 neutral), hint (ms, -1 none), quota
/// end (ms, -1 none). Returns the cooldown's end (ms, 0 none).
constexpr const char* kSettle = R"lua(
local now = tonumber(ARGV[1])
local correction = tonumber(ARGV[2])
if correction ~= 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HINCRBY', KEYS[1], 't', correction) < 0 then redis.call('HSET', KEYS[1], 't', 0) end
end
local kind = tonumber(ARGV[3])
if kind == 0 then redis.call('DEL', KEYS[3]) end
local cool = tonumber(redis.call('GET', KEYS[2]) or '0')
if kind == 1 or kind == 2 then
  local fails = redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], 3600000)
  local ends
  if kind == 2 then
    local q = tonumber(ARGV[5])
    if q > now then ends = q else ends = now + 3600000 end
  elseif tonumber(ARGV[4]) >= 0 then
    ends = now + tonumber(ARGV[4])
  else
    local d = 5000
    for _ = 2, fails do if d < 300000 then d = d * 2 end end
    if d > 300000 then d = 300000 end
    ends = now + d
  end
  if ends > cool then
    redis.call('SET', KEYS[2], string.format('%d', ends), 'PX', math.max(1, ends - now))
    cool = ends
  end
end
if cool <= now then return 0 end
return cool
)lua";

constexpr const char* kScripts[2] = {kReserve, kSettle};

std::int64_t ms_of(SystemTime t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

SystemTime time_of_ms(long long ms) { return SystemTime(std::chrono::milliseconds(ms)); }

std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// `EVALSHA sha args...` as hiredis's argv: pointers into `sha` and `args`
/// (which outlive it) and their lengths.
struct EvalCommand {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    EvalCommand(const std::string& sha, const std::vector<std::string>& args)
        : argv{"EVALSHA", sha.c_str()}, lengths{7, sha.size()} {
        for (const std::string& a : args) {
            argv.push_back(a.data());
            lengths.push_back(a.size());
        }
    }
    int count() const { return static_cast<int>(argv.size()); }
};

}  // namespace

struct RedisLimits::Reply {
    redisReply* reply = nullptr;
    ~Reply() {
        if (reply) freeReplyObject(reply);
    }
};

std::unique_ptr<RedisLimits> RedisLimits::create(const std::string& url,
                                                 std::vector<DeploymentLimits> limits,
                                                 std::chrono::milliseconds timeout,
                                                 std::string& error) {
    std::unique_ptr<RedisLimits> r(new RedisLimits());
    RedisUrl parsed;
    if (!parse_redis_url(url, parsed, error)) return nullptr;
    r->url_ = parsed.redacted;
    r->host_ = parsed.host;
    r->port_ = parsed.port;
    r->db_ = parsed.db;
    r->user_ = parsed.user;
    r->password_ = parsed.password;
    r->timeout_ = timeout;
    r->limits_ = std::move(limits);
    return r;
}

RedisLimits::~RedisLimits() {
    for (const Pooled& p : pool_) redisFree(p.context);
}

std::string RedisLimits::key(std::size_t i, const char* what) const {
    return "nous:router:" + limits_[i].name + ":" + what;
}

redisContext* RedisLimits::take() {
    if (steady_ms() < down_until_ms_.load(std::memory_order_relaxed)) return nullptr;
    Pooled pooled{nullptr, 0};
    {
        std::lock_guard lock(pool_mutex_);
        if (!pool_.empty()) {
            pooled = pool_.back();
            pool_.pop_back();
        }
    }
    if (pooled.context) {
        // The answers of the settles sent without waiting: long arrived by
        // now, read before this connection's next command.
        for (; pooled.unread > 0; --pooled.unread) {
            void* answer = nullptr;
            if (redisGetReply(pooled.context, &answer) != REDIS_OK) {
                failed(pooled.context, pooled.context->errstr);
                return nullptr;
            }
            auto* reply = static_cast<redisReply*>(answer);
            if (reply->type == REDIS_REPLY_ERROR &&
                std::string_view(reply->str, reply->len).starts_with("NOSCRIPT")) {
                std::lock_guard lock(pool_mutex_);
                shas_[1].clear();  // Redis restarted: load the script again
            }
            freeReplyObject(reply);
        }
        return pooled.context;
    }
    const long long us = std::chrono::duration_cast<std::chrono::microseconds>(timeout_).count();
    const timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
    redisContext* c = redisConnectWithTimeout(host_.c_str(), port_, tv);
    if (!c || c->err) {
        failed(c, c ? c->errstr : "no memory for a connection");
        return nullptr;
    }
    redisSetTimeout(c, tv);
    if (!password_.empty()) {
        // AUTH [user] password, as the managed Redis services' URLs ask.
        std::vector<const char*> argv{"AUTH"};
        std::vector<std::size_t> lengths{4};
        if (!user_.empty()) {
            argv.push_back(user_.data());
            lengths.push_back(user_.size());
        }
        argv.push_back(password_.data());
        lengths.push_back(password_.size());
        Reply authed{static_cast<redisReply*>(
            redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data()))};
        if (!command_answered(c, authed.reply)) return nullptr;
    }
    if (db_ != 0) {
        Reply selected{static_cast<redisReply*>(redisCommand(c, "SELECT %d", db_))};
        if (!command_answered(c, selected.reply)) return nullptr;
    }
    return c;
}

void RedisLimits::failed_reply(redisContext* c, const redisReply* reply) {
    if (reply && reply->type == REDIS_REPLY_ERROR)
        failed(c, std::string(reply->str, reply->len), true);
    else
        failed(c, reply ? "an answer of an unexpected shape" : std::string(c->errstr));
}

bool RedisLimits::command_answered(redisContext* c, const redisReply* reply) {
    if (reply && reply->type != REDIS_REPLY_ERROR) return true;
    failed(c, reply ? std::string(reply->str, reply->len) : std::string(c->errstr),
           reply != nullptr);
    return false;
}

void RedisLimits::answered() {
    // Only an answered command says Redis is back: a TCP connect is not one
    // (a stopped Redis still accepts connections into its backlog).
    if (down_.load(std::memory_order_relaxed) && down_.exchange(false))
        nous::http::log_message(nous::http::LogLevel::warning,
                                "router: shared state " + url_ + " answers again");
}

void RedisLimits::give(redisContext* c, int unread) {
    std::lock_guard lock(pool_mutex_);
    pool_.push_back({c, unread});
}

void RedisLimits::failed(redisContext* c, const std::string& why, bool refused) {
    if (c) redisFree(c);
    down_until_ms_.store(steady_ms() + 1000, std::memory_order_relaxed);
    if (!down_.exchange(true))
        nous::http::log_message(nous::http::LogLevel::warning,
                                "router: shared state " + url_ +
                                    (refused ? " refused the command (" : " unreachable (") + why +
                                    "): this process keeps its own counts until it answers");
}

std::unique_ptr<RedisLimits::Reply> RedisLimits::eval(redisContext* c, int script,
                                                      const std::vector<std::string>& args) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::string sha;
        {
            std::lock_guard lock(pool_mutex_);
            sha = shas_[script];
        }
        if (sha.empty()) {  // once per process, and again after a Redis restart
            auto loaded = std::make_unique<Reply>();
            loaded->reply =
                static_cast<redisReply*>(redisCommand(c, "SCRIPT LOAD %s", kScripts[script]));
            if (!loaded->reply) return nullptr;
            // Redis's refusal (NOAUTH...) goes back to the caller in its own words.
            if (loaded->reply->type != REDIS_REPLY_STRING) return loaded;
            sha.assign(loaded->reply->str, loaded->reply->len);
            std::lock_guard lock(pool_mutex_);
            shas_[script] = sha;
        }
        EvalCommand command(sha, args);
        auto reply = std::make_unique<Reply>();
        reply->reply = static_cast<redisReply*>(
            redisCommandArgv(c, command.count(), command.argv.data(), command.lengths.data()));
        if (!reply->reply) return nullptr;
        if (reply->reply->type == REDIS_REPLY_ERROR &&
            std::string_view(reply->reply->str, reply->reply->len).starts_with("NOSCRIPT")) {
            std::lock_guard lock(pool_mutex_);
            shas_[script].clear();
            continue;
        }
        return reply;
    }
    return nullptr;
}

std::optional<Reservation> RedisLimits::reserve(std::size_t i, std::int64_t estimate,
                                                SystemTime now) {
    redisContext* c = take();
    if (!c) return std::nullopt;
    const DeploymentLimits& l = limits_[i];
    auto reply = eval(c, 0,
                      {"2", key(i, ("w:" + std::to_string(minute_of(now))).c_str()), key(i, "cool"),
                       std::to_string(l.rpm), std::to_string(l.tpm), std::to_string(estimate),
                       "120", std::to_string(ms_of(now))});
    const redisReply* r = reply ? reply->reply : nullptr;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        failed_reply(c, r);
        return std::nullopt;
    }
    answered();
    give(c);
    Reservation out;
    const long long kind = r->element[0]->integer, a = r->element[1]->integer,
                    b = r->element[2]->integer;
    if (kind == 2) {
        out.kind = Reservation::Kind::cooling;
        out.until = time_of_ms(a);
        return out;
    }
    out.kind = kind == 0 ? Reservation::Kind::reserved : Reservation::Kind::no_budget;
    out.requests_used = a;
    out.tokens_used = b;
    out.until = SystemTime(std::chrono::minutes(minute_of(now) + 1));
    return out;
}

std::optional<SystemTime> RedisLimits::settle(std::size_t i, const Outcome& outcome,
                                              SystemTime now) {
    redisContext* c = take();
    if (!c) return std::nullopt;
    const int kind = static_cast<int>(outcome.kind);
    // The window the reservation was counted in, not the one the call ended
    // in (an expired window's key is gone, and the script corrects nothing).
    const std::int64_t window = outcome.window_minute >= 0 ? outcome.window_minute : minute_of(now);
    const std::vector<std::string> args = {
        "3",
        key(i, ("w:" + std::to_string(window)).c_str()),
        key(i, "cool"),
        key(i, "fails"),
        std::to_string(ms_of(now)),
        std::to_string(outcome.token_correction),
        std::to_string(kind),
        std::to_string(outcome.hint ? outcome.hint->count() : -1),
        std::to_string(outcome.quota_until ? ms_of(*outcome.quota_until) : -1)};
    if (outcome.kind == Outcome::Kind::success) {
        std::string sha;
        {
            std::lock_guard lock(pool_mutex_);
            sha = shas_[1];
        }
        if (!sha.empty()) {
            // Sent, not waited for: its answer is read by the connection's next user.
            EvalCommand command(sha, args);
            int done = 0;
            if (redisAppendCommandArgv(c, command.count(), command.argv.data(),
                                       command.lengths.data()) != REDIS_OK) {
                failed(c, c->errstr);
                return std::nullopt;
            }
            while (!done)
                if (redisBufferWrite(c, &done) != REDIS_OK) {
                    failed(c, c->errstr);
                    return std::nullopt;
                }
            give(c, 1);
            return SystemTime{};
        }
    }
    auto reply = eval(c, 1, args);
    const redisReply* r = reply ? reply->reply : nullptr;
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        failed_reply(c, r);
        return std::nullopt;
    }
    answered();
    give(c);
    return r->integer == 0 ? SystemTime{} : time_of_ms(r->integer);
}

}  // namespace nous::llm::detail
