#pragma once
// The router's shared_state URL (nous_llm internal): read, and printed with
// its password redacted wherever it appears (logs, errors, nouscli).

#include <string>

namespace nous::llm::detail {

/// A shared_state URL, redis://[USER:PASSWORD@]HOST[:PORT][/DB], read.
struct RedisUrl {
    std::string host, user, password;  ///< user and password percent-decoded
    int port = 6379, db = 0;
    std::string redacted;  ///< the URL as it may be printed: the password as ***
};
/// False, with `error` (which never holds the password), for a URL of another shape.
bool parse_redis_url(const std::string& url, RedisUrl& out, std::string& error);
/// `url` as it may be printed: the password of a redis:// URL as ***.
std::string redact_redis_url(const std::string& url);

}  // namespace nous::llm::detail
