#pragma once
// One provider wire format as one unit (nous_llm internal): everything a
// format knows (its name and defaults, its request, its stream events, its
// whole response, its terminal signal, which of its events are content, its
// error body) behind one table chosen once per call, as curl keeps each
// connection filter behind one vtable. The generic code (run_chat,
// build_chat_call, DeltaParser, parse_chat_response) calls through it and
// never asks which format it holds; a new concern is one more entry here,
// implemented in each format's file (formats/openai_chat.cpp,
// openai_responses.cpp, anthropic.cpp, gemini.cpp). docs/llm.md.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nous/llm/delta.hpp"
#include "nous/llm/request.hpp"

namespace nous::llm::detail {

class EventJson;
class EmbeddingFormat;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
/// The request's tool schemas, parsed once and checked (one per tool, in order).
using ToolSchemas = std::vector<std::shared_ptr<rapidjson::Document>>;

/// The JSON a request carries as text, parsed once and checked.
struct RequestJson {
    ToolSchemas tools;
    /// The response format's schema (ResponseFormat::Kind::json_schema), else null.
    std::shared_ptr<rapidjson::Document> response_schema;
};

/// One stream's reader of a format's events, with the little state the
/// format needs (Anthropic blocks, Gemini call numbering, Responses items).
class EventReader {
  public:
    virtual ~EventReader() = default;
    /// The format's reader of its common token event, without a document:
    /// true when it took the event (its delta appended to `out`, or, when
    /// `text_only` is given and the delta is bare text, that text viewed
    /// there). False for anything else: read_document() then reads it.
    virtual bool read_fast(const nous::http::EventView& event, std::string_view data,
                           EventJson& json, std::vector<Delta>& out,
                           std::optional<std::string_view>* text_only) = 0;
    /// Any event of the format, from its parsed JSON.
    virtual std::optional<Error> read_document(const nous::http::EventView& event,
                                               const rapidjson::Value& root,
                                               std::vector<Delta>& out) = 0;
};

class WireFormat {
  public:
    virtual ~WireFormat() = default;

    virtual Provider provider() const noexcept = 0;
    /// "openai", "openai-responses", "anthropic", "gemini".
    virtual std::string_view name() const noexcept = 0;
    virtual std::string_view default_base_url() const noexcept = 0;
    virtual std::string_view default_api_key_env() const noexcept = 0;

    /// The endpoint for `request` under `base` (no trailing slash).
    virtual std::string url(const ChatRequest& request, const std::string& base) const = 0;
    /// The credential header (and any the format requires, Anthropic's version).
    virtual void add_headers(Headers& headers, const ChatRequest& request) const = 0;
    /// invalid_argument, naming the field and the provider, for a field of
    /// `request` the format does not take; or naming the JSON pointer and
    /// the rule, for a response schema outside the provider's dialect.
    virtual std::optional<Error> check(const ChatRequest& request,
                                       const RequestJson& parsed) const = 0;
    /// The largest temperature the provider takes (the least is 0), checked
    /// for every request before its body is written; nullopt when no bound is
    /// known: the openai format also serves vLLM, Ollama and OpenRouter,
    /// whose ranges differ from OpenAI's.
    virtual std::optional<double> max_temperature() const noexcept { return std::nullopt; }
    /// The request body (the request and its JSON already checked).
    virtual void write_body(Writer& w, const ChatRequest& request,
                            const RequestJson& parsed) const = 0;
    /// Prompt caching (docs/cost.md): the request's cache settings written
    /// into `body`, this format's body as a document (only when the request
    /// has one). A setting the format does not take is invalid_argument
    /// naming it; the default takes none.
    virtual std::optional<Error> write_cache(rapidjson::Document& body,
                                             const ChatRequest& request) const;
    /// The provider's token counter (docs/cost.md): its `url` under `base`,
    /// and `body` (the call's own body, as a document) reduced to what the
    /// counter's request type takes. invalid_argument when the format has
    /// no counter (the default).
    virtual std::optional<Error> count_request(const ChatRequest& request, const std::string& base,
                                               std::string& url, rapidjson::Document& body) const;
    /// The count in the counter's answer; nullopt when it holds none.
    virtual std::optional<std::int64_t> count_of(const rapidjson::Value& root) const {
        (void)root;
        return std::nullopt;
    }

    virtual std::unique_ptr<EventReader> event_reader() const = 0;
    /// What a stream must carry to have ended as the provider meant it, for
    /// the error when it did not ("finish_reason", "message_stop"...).
    virtual std::string_view terminal_signal() const noexcept = 0;
    /// Whether the format sends keep-alive events that are not content
    /// (Anthropic `ping`, Responses `keepalive`): those never reset the
    /// content deadlines.
    virtual bool has_keepalive_events() const noexcept { return false; }

    /// A whole (non-streamed) response body's JSON into deltas.
    virtual std::optional<Error> read_whole(const rapidjson::Value& root,
                                            std::vector<Delta>& out) const = 0;
    /// The provider's words of an error body's JSON ("" when it holds none).
    virtual std::string error_message(const rapidjson::Value& root) const;

    /// The stream's framing: SSE unless the format says otherwise (Bedrock: the AWS event stream).
    virtual nous::http::StreamFormat stream_format() const noexcept {
        return nous::http::StreamFormat::sse;
    }
    /// The last step of building a call, once its URL, headers and body are
    /// final: a platform that signs the request (SigV4) adds its signature.
    virtual std::optional<Error> sign(HttpCall& call, const ChatRequest& request) const {
        (void)call;
        (void)request;
        return std::nullopt;
    }

    /// Whether sign() signs each attempt anew (at its sending time: a resend
    /// is signed again), through the HTTP layer's before_each_attempt.
    virtual bool signs_each_attempt(const ChatRequest& request) const {
        (void)request;
        return false;
    }
    /// The model endpoint answered 401: a platform whose credential it
    /// caches drops it and returns true (the call is then made once more).
    virtual bool renew_credentials(const ChatRequest& request) const {
        (void)request;
        return false;
    }

    /// The provider's embeddings endpoint (embeddings/embedding_format.hpp);
    /// nullptr when it has none (Anthropic).
    virtual const EmbeddingFormat* embeddings() const noexcept { return nullptr; }
};

/// `base` (or the format's default when empty) without its trailing slashes.
std::string base_url_of(const WireFormat& format, const std::string& base);
/// The caller's headers after ours; a name they repeat replaces ours.
void add_caller_headers(Headers& ours, const Headers& caller);

/// The format of `provider`.
const WireFormat& wire_format(Provider provider) noexcept;
/// The format of a name above; nullptr for anything else.
const WireFormat* wire_format_named(std::string_view name) noexcept;

}  // namespace nous::llm::detail
