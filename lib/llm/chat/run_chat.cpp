// One chat request through nous_http, streamed or not.

#include "nous/llm/run_chat.hpp"

#include "formats/wire_format.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/cost.hpp"
#include "nous/llm/detail/delta_parser_access.hpp"
#include "nous/llm/json_shapes.hpp"
#include "telemetry/call_observation.hpp"

namespace nous::llm {

namespace {

/// What a streamed chat touches at every token, side by side. A stream's
/// thread sleeps between tokens, and its memory is cold when it wakes: each
/// line a token touches costs, so the few hot fields share lines here rather
/// than lie across run_chat's frame among the request, the options and the
/// result (docs/llm.md, "Deltas"). Aligned, so that the first three
/// (text_only, deltas, the parser) and the message's text share three lines.
struct alignas(64) TokenLoop {
    explicit TokenLoop(Provider provider) : parser(provider) {}
    std::optional<std::string_view> text_only;
    std::vector<Delta> deltas;
    DeltaParser parser;
    Accumulator accumulator;  ///< the message's text is its first member
    /// The commonest event, a text fragment, goes to the caller in this one
    /// Delta, of which only `text` (its first member) ever changes: a token
    /// touches its first line, not a whole Delta built and destroyed.
    Delta text_delta;
    /// The caller stopped the stream, or the provider ended it with an error
    /// event: the message so far is the result, complete or not.
    bool stopped = false;
};

/// A stream's failure in the provider's words: out of read_events' frame.
[[gnu::noinline, gnu::cold]] std::optional<Error> stream_failure(Provider provider,
                                                                 const Error& error) {
    return provider_error(provider, error);
}

/// The stream's events into `loop` and the caller's callback, until the
/// stream's end or `loop.stopped` (nullopt), or an error. A frame of its
/// own, small: the loop's per-token stack is this and `loop`. Observed: the
/// response head and the content events go to `observation` too; the loop of
/// a call nobody observes is compiled without them.
template <bool Observed>
[[gnu::noinline]] std::optional<Error> read_events(
    nous::http::Stream& stream, TokenLoop& loop, Provider provider,
    const std::function<bool(const Delta&)>& on_delta,
    [[maybe_unused]] detail::CallObservation* observation) {
    // Views, not copies: each event is parsed where the stream holds it.
    while (auto item = stream.next_view()) {
        if constexpr (Observed)  // read with the first item (an error status has a head too)
            if (!item->is_error() || item->error->code == nous::http::ErrorCode::http_status)
                observation->response_head();
        if (item->is_done()) break;
        if (item->is_error()) return stream_failure(provider, *item->error);
        loop.deltas.clear();
        if (auto e = detail::DeltaParserAccess::parse(loop.parser, item->event, loop.deltas,
                                                      loop.text_only))
            return e;
        if (loop.text_only) {
            if constexpr (Observed)
                if (!loop.text_only->empty()) observation->content();
            loop.accumulator.add_text(*loop.text_only);
            if (!on_delta) continue;
            loop.text_delta.text.assign(*loop.text_only);
            if (!on_delta(loop.text_delta)) {  // the caller stopped it
                loop.stopped = true;
                break;
            }
            continue;
        }
        for (const Delta& d : loop.deltas) {
            if constexpr (Observed)
                if (detail::is_content(d)) observation->content();
            loop.accumulator.add(d);
            const bool go_on = !on_delta || on_delta(d);
            // The provider ended the stream with an error, or the caller stopped it
            // (dropping the stream cancels it).
            if (d.error || !go_on) {
                loop.stopped = true;
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

/// A structured answer read and checked once the message is whole: the
/// refusal, the text that is not JSON, or the value against its schema.
/// The call's cost by the request's price table, when it has one and usage came back.
void price(const ChatRequest& request, ChatResult& result) {
    if (request.prices && result.usage)
        result.cost = request.prices->cost(request.model, *result.usage);
}

void finish_structured(const ChatRequest& request, ChatResult& result) {
    if (!request.response_format) return;
    result.structured = true;
    if (result.refusal) {
        result.output_error =
            OutputError{OutputError::Kind::refusal, "", "", "refusal: " + *result.refusal};
        return;
    }
    PartialJson reader;  // one pass: the same reader a caller feeds delta by delta
    if (!reader.feed(result.text) || !reader.finish()) {
        result.output_error = OutputError{OutputError::Kind::not_json, "", reader.error(),
                                          "not JSON: " + reader.error()};
        return;
    }
    const ResponseFormat& format = *request.response_format;
    if (format.kind == ResponseFormat::Kind::json_object &&
        reader.value().type != JsonValue::Type::object) {
        result.output_error =
            OutputError{OutputError::Kind::not_json, "", "a JSON object", "not a JSON object"};
        return;
    }
    if (format.kind == ResponseFormat::Kind::json_schema)
        if (auto bad = validate_against_schema(reader.value(), format.schema)) {
            result.output_error =
                OutputError{OutputError::Kind::schema, bad->pointer, bad->expected, bad->message()};
            return;
        }
    result.parsed = reader.value();
}

/// run_chat with an observer: the observation lives in this frame, apart
/// from the unobserved call's (docs/llm.md, "Stack").
[[gnu::noinline]] Result<ChatResult> run_chat_told(
    const ChatRequest& request, const nous::http::Options& options,
    const std::function<bool(const Delta&)>& on_delta, Observer& observer) {
    detail::CallObservation observation(observer);
    observation.set_target(request);
    observation.emit(CallEvent::Kind::start);
    auto result = detail::run_chat_observed(request, options, on_delta, &observation);
    observation.finish(result);
    return result;
}

}  // namespace

Result<ChatResult> run_chat(const ChatRequest& request, const nous::http::Options& options,
                            const std::function<bool(const Delta&)>& on_delta) {
    if (Observer* observer = detail::observer_of(request))
        return run_chat_told(request, options, on_delta, *observer);
    return detail::run_chat_observed(request, options, on_delta, nullptr);
}

namespace {

/// A whole answer's body read into the result, handed to the caller as one delta.
Result<ChatResult> read_whole_answer(const ChatRequest& request, std::string_view body,
                                     Headers headers,
                                     const std::function<bool(const Delta&)>& on_delta) {
    auto result = parse_chat_response(request.provider, body);
    if (!result) return result;
    finish_structured(request, result.value());
    result->request_id = nous::http::request_id_of(headers);
    result->rate_limit = parse_rate_limit(headers);
    result->headers = std::move(headers);
    price(request, result.value());
    if (on_delta) {
        Delta whole;
        whole.text = result->text;
        whole.reasoning = result->reasoning.text;
        on_delta(whole);
    }
    return result;
}

/// A whole (unstreamed) answer: one post, parsed once.
[[gnu::noinline]] Result<ChatResult> run_whole(const HttpCall& call, const ChatRequest& request,
                                               const nous::http::Options& options,
                                               const std::function<bool(const Delta&)>& on_delta,
                                               detail::CallObservation* observation) {
    // An answer it cannot read (a body in a coding nobody asked for) is said as such.
    nous::http::Options strict = options;
    strict.refuse_unreadable_answers = true;
    auto response = nous::http::post(call.url, call.body, call.headers, strict);
    if (observation && (response || response.error().code == nous::http::ErrorCode::http_status))
        observation->response_head();
    if (!response) return provider_error(request.provider, response.error());
    return read_whole_answer(request, response->body, std::move(response->headers), on_delta);
}

/// A server that did not stream: the HTTP layer refuses a 2xx JSON answer
/// to an event stream request as `protocol`, with the answer as the error's
/// body. A whole message in it is the result, as run_whole reads one; an
/// error object in it lends the error the provider's words; anything else
/// (a body in a coding nobody asked for, a stream's own failure) stays the
/// error it was.
[[gnu::noinline, gnu::cold]] Result<ChatResult> unstreamed_answer(
    Error error, const ChatRequest& request, const std::function<bool(const Delta&)>& on_delta) {
    bool json = false;
    for (const auto& [name, value] : error.headers)
        if (nous::http::header_name_equals(name, "content-type"))
            json = value.find("json") != std::string::npos;
    if (error.code != nous::http::ErrorCode::protocol || error.status / 100 != 2 || !json)
        return error;
    auto result = read_whole_answer(request, error.body, error.headers, on_delta);
    if (result) return result;
    if (auto doc = nous::http::parse_json(error.body)) {
        const std::string words = detail::wire_format(request.provider).error_message(*doc.value());
        if (!words.empty()) error.message += ": " + words;
    }
    return error;
}

/// The stream opened with the wire format's decoder and content test. The
/// options' copy lives in this frame only, not under the token loop.
[[gnu::noinline]] nous::http::Stream open_stream(const HttpCall& call,
                                                 const detail::WireFormat& format,
                                                 const nous::http::Options& options) {
    nous::http::Options stream_options = options;
    if (!stream_options.decoder) stream_options.stream_format = format.stream_format();
    // A whole JSON answer (a server that did not stream) comes back as an
    // error carrying it (unstreamed_answer), not as a stream of no event.
    stream_options.refuse_unreadable_answers = true;
    if (!stream_options.is_content_event && format.has_keepalive_events()) {
        // Anthropic's `ping` events (and a Responses `keepalive`) keep the
        // connection alive and say nothing: like SSE comments, they never
        // reset the content deadlines.
        stream_options.is_content_event = [](const nous::http::EventView& e) {
            return e.type != "ping" && e.type != "keepalive";
        };
    }
    return nous::http::stream(call.url, call.body, call.headers, stream_options);
}

/// The streamed message made a result once the events are read: out of the
/// token loop's frame.
[[gnu::noinline]] Result<ChatResult> finish_streamed(const TokenLoop& loop,
                                                     const nous::http::Stream& stream,
                                                     const ChatRequest& request,
                                                     const detail::WireFormat& format) {
    ChatResult result = loop.accumulator.result();
    result.headers = stream.response_headers();  // one copy of the headers
    result.request_id = nous::http::request_id_of(result.headers);
    result.rate_limit = parse_rate_limit(result.headers);
    price(request, result);
    if (loop.stopped) return result;
    finish_structured(request, result);
    // A body that ended cleanly before the provider's terminal signal is not
    // a success: the message is cut short. The partial message goes with the
    // error, as JSON in its body.
    if (!result.complete) {
        nous::http::Error cut(nous::http::ErrorCode::truncated,
                              "stream ended before the provider finished (no " +
                                  std::string(format.terminal_signal()) + ")");
        cut.request_id = result.request_id;
        cut.body = to_json(result);
        return cut;
    }
    return result;
}

/// A streamed answer. This frame is on the stack for the stream's whole
/// life, under every read and the connect: it holds the token loop and
/// little else (docs/llm.md, "Stack").
[[gnu::noinline]] Result<ChatResult> run_streamed(HttpCall& call, const ChatRequest& request,
                                                  const nous::http::Options& options,
                                                  const std::function<bool(const Delta&)>& on_delta,
                                                  detail::CallObservation* observation) {
    const detail::WireFormat& format = detail::wire_format(request.provider);
    nous::http::Stream stream = open_stream(call, format, options);
    // The stream holds its own copy of the request until the head: ours is
    // never read again (a renewed credential builds the call anew), and a
    // long conversation's body is not kept for the stream's whole life.
    std::string().swap(call.body);
    Headers().swap(call.headers);
    // On the heap: under the loop's frame the connect runs (a pull stream
    // opens at its first read), and 1.4 KB there was a stack page more a stream.
    const auto owned_loop = std::make_unique<TokenLoop>(request.provider);
    TokenLoop& loop = *owned_loop;
    if (auto error = observation
                         ? read_events<true>(stream, loop, request.provider, on_delta, observation)
                         : read_events<false>(stream, loop, request.provider, on_delta, nullptr))
        return unstreamed_answer(std::move(*error), request, on_delta);
    return finish_streamed(loop, stream, request, format);
}

Result<ChatResult> run_call(HttpCall& call, const ChatRequest& request,
                            const nous::http::Options& options,
                            const std::function<bool(const Delta&)>& on_delta,
                            detail::CallObservation* observation) {
    return request.stream ? run_streamed(call, request, options, on_delta, observation)
                          : run_whole(call, request, options, on_delta, observation);
}

/// A platform that signs each request (SigV4) signs each attempt anew, at
/// its sending time: the options' copy with the signing hook lives here.
[[gnu::noinline]] Result<ChatResult> run_signed(HttpCall& call, const ChatRequest& request,
                                                const detail::WireFormat& signer,
                                                const nous::http::Options& options,
                                                const std::function<bool(const Delta&)>& on_delta,
                                                detail::CallObservation* observation) {
    nous::http::Options signing = options;
    signing.before_each_attempt = [&signer, &request](std::string_view, std::string_view url,
                                                      std::string_view body, Headers& headers) {
        HttpCall again{std::string(url), std::move(headers), std::string(body)};
        (void)signer.sign(again, request);  // its credentials were found when the call was built
        headers = std::move(again.headers);
    };
    return run_call(call, request, signing, on_delta, observation);
}

Result<ChatResult> run_chat_once(const ChatRequest& request, const nous::http::Options& options,
                                 const std::function<bool(const Delta&)>& on_delta,
                                 detail::CallObservation* observation) {
    auto call = build_chat_call(request);
    if (!call) return call.error();
    const detail::WireFormat& signer = detail::wire_format(request.provider);
    if (signer.signs_each_attempt(request))
        return run_signed(call.value(), request, signer, options, on_delta, observation);
    return run_call(call.value(), request, options, on_delta, observation);
}

/// The call made once more after its platform dropped a cached credential:
/// the second result's temporary lives in this cold frame.
[[gnu::noinline, gnu::cold]] void run_again(Result<ChatResult>& result, const ChatRequest& request,
                                            const nous::http::Options& options,
                                            const std::function<bool(const Delta&)>& on_delta,
                                            detail::CallObservation* observation) {
    result = run_chat_once(request, options, on_delta, observation);
}

}  // namespace

Result<ChatResult> detail::run_chat_observed(const ChatRequest& request,
                                             const nous::http::Options& options,
                                             const std::function<bool(const Delta&)>& on_delta,
                                             CallObservation* observation) {
    auto result = run_chat_once(request, options, on_delta, observation);
    // A platform that caches its credential (Vertex's access token) drops it
    // on a 401, and the call is made once more with a new one.
    if (!result && result.error().status == 401 &&
        detail::wire_format(request.provider).renew_credentials(request))
        run_again(result, request, options, on_delta, observation);
    return result;
}

}  // namespace nous::llm
