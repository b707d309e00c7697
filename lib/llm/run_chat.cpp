// One chat request through nous_http, streamed or not.

#include "nous/llm/chat.hpp"

namespace nous::llm {

Result<ChatResult> run_chat(const ChatRequest& request, const nous::http::Options& options,
                            const std::function<bool(const Delta&)>& on_delta) {
    auto call = build_chat_call(request);
    if (!call) return call.error();
    if (!request.stream) {
        auto response = nous::http::post(call->url, call->body, call->headers, options);
        if (!response) return provider_error(request.provider, response.error());
        auto result = parse_chat_response(request.provider, response->body);
        if (result) {
            result->request_id = response->request_id;
            result->rate_limit = parse_rate_limit(response->headers);
            result->headers = std::move(response->headers);  // the response is done with
        }
        if (result && on_delta) {
            Delta whole;
            whole.text = result->text;
            whole.reasoning = result->reasoning.text;
            on_delta(whole);
        }
        return result;
    }
    nous::http::Options stream_options = options;
    if (!stream_options.is_content_event && (request.provider == Provider::anthropic ||
                                             request.provider == Provider::openai_responses)) {
        // Anthropic's `ping` events (and a Responses `keepalive`) keep the
        // connection alive and say nothing: like SSE comments, they never
        // reset the content deadlines.
        stream_options.is_content_event = [](const nous::http::EventView& e) {
            return e.type != "ping" && e.type != "keepalive";
        };
    }
    nous::http::Stream stream =
        nous::http::stream(call->url, call->body, call->headers, stream_options);
    DeltaParser parser(request.provider);
    Accumulator accumulator;
    std::vector<Delta> deltas;
    // The commonest event, a text fragment, goes to the caller in this one
    // Delta, of which only `text` ever changes: a token touches its first
    // line, not a whole Delta built and destroyed (docs/llm.md, "Deltas").
    Delta text_delta;
    std::optional<std::string_view> text_only;
    auto finished = [&] {
        ChatResult result = accumulator.result();
        result.headers = stream.response_headers();  // one copy of the headers
        result.request_id = nous::http::request_id_of(result.headers);
        result.rate_limit = parse_rate_limit(result.headers);
        return result;
    };
    // Views, not copies: each event is parsed where the stream holds it.
    while (auto item = stream.next_view()) {
        if (item->is_done()) break;
        if (item->is_error()) return provider_error(request.provider, *item->error);
        deltas.clear();
        if (auto e = parser.parse(item->event, deltas, text_only)) return *e;
        if (text_only) {
            accumulator.add_text(*text_only);
            if (!on_delta) continue;
            text_delta.text.assign(*text_only);
            if (!on_delta(text_delta)) return finished();  // the caller stopped it
            continue;
        }
        for (const Delta& d : deltas) {
            accumulator.add(d);
            const bool go_on = !on_delta || on_delta(d);
            // The provider ended the stream with an error, or the caller stopped it
            // (dropping the stream cancels it).
            if (d.error || !go_on) return finished();
        }
    }
    ChatResult result = finished();
    // A body that ended cleanly before the provider's terminal signal is not
    // a success: the message is cut short. The partial message goes with the
    // error, as JSON in its body.
    if (!result.complete) {
        nous::http::Error cut(
            nous::http::ErrorCode::truncated,
            "stream ended before the provider finished (no " +
                std::string(request.provider == Provider::anthropic          ? "message_stop"
                            : request.provider == Provider::gemini           ? "finishReason"
                            : request.provider == Provider::openai_responses ? "response.completed"
                                                                             : "finish_reason") +
                ")");
        cut.request_id = result.request_id;
        cut.body = to_json(result);
        return cut;
    }
    return result;
}

}  // namespace nous::llm
