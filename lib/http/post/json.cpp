// post_json and parse_json: the opt-in RapidJSON helpers, depth-limited.

#include "nous/http/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/json_limits.hpp"

namespace nous::http {

std::string to_json(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::shared_ptr<rapidjson::Document>> parse_json(std::string_view text) {
    auto doc = std::make_shared<rapidjson::Document>();
    // Server bytes: refuse deep nesting before RapidJSON recurses into it.
    if (!detail::json_depth_within(text))
        return Error(ErrorCode::protocol, "JSON nested deeper than " +
                                              std::to_string(detail::max_json_depth) + " levels");
    doc->Parse(text.data(), text.size());
    if (doc->HasParseError())
        return Error(ErrorCode::protocol, std::string("invalid JSON at offset ") +
                                              std::to_string(doc->GetErrorOffset()) + ": " +
                                              rapidjson::GetParseError_En(doc->GetParseError()));
    if (!detail::numbers_finite(*doc)) return Error(ErrorCode::protocol, detail::kNumberOutOfRange);
    return doc;
}

Result<JsonResponse> post_json(std::string_view url, const rapidjson::Value& body,
                               const Headers& headers, const Options& options) {
    auto response = post(url, to_json(body), headers, options);
    if (!response) return response.error();
    auto doc = parse_json(response->body);
    if (!doc) {
        Error e = doc.error();
        e.status = response->status;
        e.headers = response->headers;
        e.body = std::move(response->body);
        return e;
    }
    return JsonResponse{std::move(response.value()), std::move(doc.value())};
}

}  // namespace nous::http
