#pragma once
// What the mock's four reply formats share (nous_mock internal): the words,
// the tool call's arguments and the reasoning every reply carries, an SSE
// event, and the table of the formats (replies/*.cpp), each of which writes
// its provider's stream events and whole body.

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "provider_formats.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

inline constexpr std::int64_t kCycle = 16;  ///< word(i) repeats every kCycle tokens

// The tool call's arguments, and the pieces a stream sends them in.
inline const char* const kArguments = R"({"city": "Paris", "unit": "celsius"})";
inline const char* const kArgumentPieces[] = {R"({"city")", R"(: "Par)", R"(is", "un)",
                                              R"(it": "celsius"})"};

// The reasoning a reply carries when asked, its pieces, and its signature.
inline const char* const kReasoning = "Thinking about the answer.";
inline const char* const kReasoningPieces[] = {"Thinking", " about", " the", " answer."};
inline const char* const kSignature = "mock-signature-1";
// What the model says when it refuses (the refusal fault).
inline const char* const kRefusal = "I can't help with that.";

/// Bytes of the text of tokens [0, n).
std::uint64_t text_length(std::int64_t n);
/// Output tokens a reply reports: its text tokens, and 5 for a tool call.
inline std::int64_t output_tokens(const Reply& r) {
    return r.tokens + (r.tool_name.empty() ? 0 : 5);
}
/// One SSE event (with its `event:` line when named), blank line included.
inline std::string sse(const std::string& data, const char* event = nullptr) {
    return (event ? std::string("event: ") + event + "\n" : std::string()) + "data: " + data +
           "\n\n";
}

/// The OpenAI formats' refusal of an integer below its least value, or nullopt.
inline std::optional<std::string> openai_below_min(const rapidjson::Value& doc, const char* name,
                                                   std::int64_t least) {
    const rapidjson::Value* v = find(doc, name);
    if (!v || !v->IsInt64() || v->GetInt64() >= least) return std::nullopt;
    return openai_error(
        "Invalid '" + std::string(name) + "': integer below minimum value. Expected a value >= " +
            std::to_string(least) + ", but got " + std::to_string(v->GetInt64()) + " instead.",
        "invalid_request_error", "integer_below_min_value", name);
}

/// Member `name` of `object` when it is a number above `most`, else nullptr.
inline const rapidjson::Value* number_above(const rapidjson::Value* object, const char* name,
                                            double most) {
    const rapidjson::Value* n = object ? find(*object, name) : nullptr;
    return n && n->IsNumber() && n->GetDouble() > most ? n : nullptr;
}
/// A request's number as the providers' messages show it: 2.5, 3.
inline std::string number_text(const rapidjson::Value& n) {
    std::ostringstream out;
    out << n.GetDouble();
    return out.str();
}

/// The OpenAI formats' refusal of a string past its longest, at `path`.
inline std::string openai_too_long(const std::string& path, std::size_t most, std::size_t length,
                                   const std::string& kind = "string") {
    return openai_error("Invalid '" + path + "': " + kind + " too long. Expected a" +
                            (kind == "array" ? "n " : " ") + kind + " with maximum length " +
                            std::to_string(most) + ", but got a" + (kind == "array" ? "n " : " ") +
                            kind + " with length " + std::to_string(length) + " instead.",
                        "invalid_request_error", kind + "_above_max_length", path);
}

/// One provider's replies.
class ReplyFormat {
  public:
    virtual ~ReplyFormat() = default;
    /// A streamed reply's events around its tokens, and the JSON before a token's text.
    virtual void stream_frame(const Reply& r, std::string& token_head,
                              std::vector<std::string>& before,
                              std::vector<std::string>& after) const = 0;
    /// The event of text token `token` (event `at` of the stream), its text
    /// given as a JSON string literal.
    virtual void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                             std::uint64_t token, const std::string& text,
                             std::string& out) const = 0;
    /// A whole reply's head and tail, around the text of its tokens.
    virtual void whole(const Reply& r, WholeBody& body) const = 0;

    // What a request asks, in the provider's fields (chat_requests.cpp).
    /// Whether it asks for a streamed reply (`by_url`: the route says so).
    virtual bool streamed(const rapidjson::Value& doc, bool by_url) const {
        (void)by_url;
        const rapidjson::Value* stream = find(doc, "stream");
        return stream && stream->IsBool() && stream->GetBool();
    }
    /// The name of the first tool it offers ("" for none).
    virtual std::string first_tool(const rapidjson::Value& doc) const {
        const rapidjson::Value* tools = find(doc, "tools");
        return tools && tools->IsArray() && !tools->Empty() ? string_at(find((*tools)[0], "name"))
                                                            : std::string();
    }
    /// Whether the conversation already holds a tool's result (the mock then
    /// answers in text, so that an agent loop against it ends).
    virtual bool holds_tool_result(const rapidjson::Value& doc) const = 0;
    virtual bool asks_reasoning(const rapidjson::Value& doc) const = 0;
    /// A 400's body in the provider's shape when it would refuse the request
    /// (an output limit below its least, a reasoning signature dropped);
    /// nullopt when it takes it.
    virtual std::optional<std::string> refusal_of(const rapidjson::Value& doc) const {
        (void)doc;
        return std::nullopt;
    }
    /// Whether a streamed reply ends with a usage event (OpenAI: only when asked).
    virtual bool includes_usage(const rapidjson::Value& doc) const {
        (void)doc;
        return true;
    }

    // What a request asks of its content (structured_replies.cpp).
    /// The schema of a structured answer, or nullptr; `object_mode` when
    /// the request asks for JSON without one.
    virtual const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                                     bool& object_mode) const = 0;
    /// The tool its tool_choice names ("" for none; `first` when any tool is
    /// required); nullopt when it leaves the choice to the mock.
    virtual std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                                   const std::string& first) const = 0;
    virtual std::vector<std::string> stop_sequences(const rapidjson::Value& doc) const = 0;
    /// Whether the provider has a refusal of its own; else a refusal is text.
    virtual bool has_refusal() const { return true; }
};

const ReplyFormat& reply_format(Format format) noexcept;

}  // namespace nous::http::mock
