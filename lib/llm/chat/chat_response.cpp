// A whole (non-streamed) response into the message, and a provider's error
// body into its own words: the generic parts; each format reads its JSON.

#include "formats/wire_format.hpp"
#include "json/answer_utf8.hpp"
#include "json/provider_json.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

Result<ChatResult> parse_chat_response(Provider provider, std::string_view body) {
    auto doc = nous::http::parse_json(body);
    if (!doc) return detail::malformed(doc.error().message);
    std::vector<Delta> deltas;
    if (auto bad = detail::wire_format(provider).read_whole(*doc.value(), deltas)) return *bad;
    if (!detail::all_ascii(deltas))
        if (auto bad = detail::non_utf8_answer(deltas)) return *bad;
    Accumulator accumulator;
    for (const Delta& d : deltas) accumulator.add(d);
    ChatResult result = accumulator.result();
    if (result.stream_error) return Error(nous::http::ErrorCode::protocol, *result.stream_error);
    result.complete = true;  // a whole body is the whole message
    return result;
}

Error provider_error(Provider provider, Error error) {
    if (error.code != nous::http::ErrorCode::http_status || error.body.empty()) return error;
    auto doc = nous::http::parse_json(error.body);
    if (!doc) return error;  // not JSON: the generic message stays
    std::string words = detail::wire_format(provider).error_message(*doc.value());
    if (words.empty()) return error;
    // AWS names the error's kind in x-amzn-ErrorType ("ThrottlingException:uri"): its name leads.
    for (const auto& [name, value] : error.headers)
        if (nous::http::header_name_equals(name, "x-amzn-errortype"))
            words = value.substr(0, value.find(':')) + ": " + words;
    error.message = "HTTP " + std::to_string(error.status) + ": " + words;
    return error;
}

}  // namespace nous::llm
