#pragma once
// Random (version 4) UUIDs for Idempotency-Key headers.

#include <string>

namespace nous::http::detail {

/// "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", lower-case hex, 122 random bits.
std::string uuid_v4();

}  // namespace nous::http::detail
