// A request's input tokens by the provider's own counter (nous/llm/count_tokens.hpp).

#include "nous/llm/count_tokens.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "formats/wire_format.hpp"
#include "nous/http/client.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"

namespace nous::llm {

Result<std::int64_t> count_tokens(const ChatRequest& request, const nous::http::Options& options) {
    const detail::WireFormat& format = detail::wire_format(request.provider);
    ChatRequest whole = request;
    whole.stream = false;                // the counter takes no stream member
    auto call = build_chat_call(whole);  // every check the call itself passes
    if (!call) return call.error();
    rapidjson::Document body;
    body.Parse(call->body.data(), call->body.size());
    std::string url;
    if (auto refused =
            format.count_request(request, detail::base_url_of(format, request.base_url), url, body))
        return *refused;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    body.Accept(w);
    // A platform that signs (SigV4) signs the counter's own URL and body.
    HttpCall counted{std::move(url), std::move(call->headers),
                     std::string(buffer.GetString(), buffer.GetSize())};
    if (auto bad = format.sign(counted, whole)) return *bad;
    nous::http::Options strict = options;
    strict.refuse_unreadable_answers = true;  // a coded body is no JSON to read
    auto response = nous::http::post(counted.url, counted.body, counted.headers, strict);
    if (!response) return provider_error(request.provider, response.error());
    auto answer = nous::http::parse_json(response->body);
    std::optional<std::int64_t> count;
    if (answer) count = format.count_of(*answer.value());
    if (!count) {
        Error e(nous::http::ErrorCode::protocol,
                std::string(format.name()) + "'s token counter answered without a count");
        e.request_id = response->request_id;
        e.body = response->body;
        return e;
    }
    return *count;
}

}  // namespace nous::llm
