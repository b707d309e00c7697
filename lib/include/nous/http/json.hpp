#pragma once
// JSON convenience on top of post(): an opt-in header that brings RapidJSON
// (the core headers do not depend on it).

#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "nous/http/client.hpp"

namespace nous::http {

/// Serializes `value` compactly.
std::string to_json(const rapidjson::Value& value);

/// Result of post_json: the parsed body plus the raw response.
struct JsonResponse {
    Response response;
    std::shared_ptr<rapidjson::Document> document;  ///< never null on success
};

/// POSTs `body` as JSON and parses the 2xx response body. A body that is not
/// JSON is a `protocol` error carrying the raw body. Errors as post().
Result<JsonResponse> post_json(std::string_view url, const rapidjson::Value& body,
                               const Headers& headers = {}, const Options& options = {});

/// Parses `text`; a parse failure is an Error (protocol) with the offset. So
/// is a number outside a double's range ("1e309"), which RapidJSON would
/// otherwise hold as infinity and could not write back.
Result<std::shared_ptr<rapidjson::Document>> parse_json(std::string_view text);

}  // namespace nous::http
