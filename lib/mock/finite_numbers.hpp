#pragma once
// Whether every number of a request's JSON is finite. RapidJSON reads a
// number past a double's range ("1.8e308") as infinity without an error, and
// its Writer stops at infinity: an answer that echoed one (a schema's
// `const`) would go out as broken JSON. The mock refuses such a request, as
// a provider refuses a value it cannot hold.

#include <rapidjson/document.h>

namespace nous::http::mock {

/// True when no number in `value` is infinite. Without recursion: a
/// client's body may nest as deep as the iterative parser let it.
bool numbers_finite(const rapidjson::Value& value);

}  // namespace nous::http::mock
