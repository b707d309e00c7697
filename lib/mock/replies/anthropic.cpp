// The mock's replies as Anthropic Messages: content blocks (thinking, text,
// tool_use), a ping, message_delta with the usage, message_stop.

#include <algorithm>

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

/// The stop_reason: refusal, the stop sequence met, a tool call, or the turn's end.
std::string stop_reason(const Reply& r) {
    if (r.refusal) return "\"refusal\"";
    if (!r.stop_sequence.empty()) return "\"stop_sequence\"";
    return r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"";
}

std::string stop_sequence(const Reply& r) {
    return r.stop_sequence.empty() ? "null" : json_string(r.stop_sequence);
}

/// Anthropic's usage up to its output: input_tokens leaves the cache out, reported apart.
std::string anthropic_input(const Reply& r) {
    return R"({"input_tokens":)" + std::to_string(r.prompt_tokens - r.cache_read - r.cache_write) +
           R"(,"cache_creation_input_tokens":)" + std::to_string(r.cache_write) +
           R"(,"cache_read_input_tokens":)" + std::to_string(r.cache_read);
}

/// Anthropic's content blocks: thinking (when asked) first, then text, then the tool call.
int anthropic_text_index(const Reply& r) { return r.reasoning ? 1 : 0; }

void anthropic_events(const Reply& r, std::vector<std::string>& before,
                      std::vector<std::string>& after) {
    before.push_back(sse(
        R"({"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":)" +
            json_string(r.model) +
            R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":)" +
            anthropic_input(r) + R"(,"output_tokens":1}}})",
        "message_start"));
    if (r.reasoning) {
        before.push_back(sse(
            R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})",
            "content_block_start"));
        for (const char* piece : kReasoningPieces)
            before.push_back(sse(
                R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":)" +
                    json_string(piece) + "}}",
                "content_block_delta"));
        before.push_back(sse(
            R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":)" +
                json_string(kSignature) + "}}",
            "content_block_delta"));
        before.push_back(sse(R"({"type":"content_block_stop","index":0})", "content_block_stop"));
    }
    const std::string text_index = std::to_string(anthropic_text_index(r));
    before.push_back(sse(R"({"type":"content_block_start","index":)" + text_index +
                             R"(,"content_block":{"type":"text","text":""}})",
                         "content_block_start"));
    before.push_back(sse(R"({"type":"ping"})", "ping"));
    after.push_back(
        sse(R"({"type":"content_block_stop","index":)" + text_index + "}", "content_block_stop"));
    if (!r.tool_name.empty()) {
        const std::string call_index = std::to_string(anthropic_text_index(r) + 1);
        after.push_back(
            sse(R"({"type":"content_block_start","index":)" + call_index +
                    R"(,"content_block":{"type":"tool_use","id":"toolu_mock_1","name":)" +
                    json_string(r.tool_name) + R"(,"input":{}}})",
                "content_block_start"));
        for (const char* piece : kArgumentPieces)
            after.push_back(sse(R"({"type":"content_block_delta","index":)" + call_index +
                                    R"(,"delta":{"type":"input_json_delta","partial_json":)" +
                                    json_string(piece) + "}}",
                                "content_block_delta"));
        after.push_back(sse(R"({"type":"content_block_stop","index":)" + call_index + "}",
                            "content_block_stop"));
    }
    after.push_back(sse(std::string(R"({"type":"message_delta","delta":{"stop_reason":)") +
                            stop_reason(r) + R"(,"stop_sequence":)" + stop_sequence(r) +
                            R"(},"usage":{"output_tokens":)" + std::to_string(output_tokens(r)) +
                            "}}",
                        "message_delta"));
    after.push_back(sse(R"({"type":"message_stop"})", "message_stop"));
}

/// What Anthropic counts as whitespace.
constexpr std::string_view kSpace = " \t\n\r";

/// Text of whitespace alone (an empty text is not).
bool blank(std::string_view text) {
    return !text.empty() && text.find_first_not_of(kSpace) == std::string_view::npos;
}

/// What Anthropic says of a message's text (`where` "messages") or of the
/// system prompt's ("system"): an empty text block, one of whitespace alone,
/// and a final assistant turn (a prefill) whose last text ends in
/// whitespace; nullopt when it takes it.
std::optional<std::string> text_refusal(const rapidjson::Value* content, bool final_assistant,
                                        const std::string& where) {
    if (!content) return std::nullopt;
    std::string_view last;  // the last text block's text
    if (content->IsString()) last = {content->GetString(), content->GetStringLength()};
    if (blank(last)) return where + ": text content blocks must contain non-whitespace text";
    for (rapidjson::SizeType j = 0; content->IsArray() && j < content->Size(); ++j) {
        const rapidjson::Value& block = (*content)[j];
        last = {};
        if (string_at(find(block, "type")) != "text") continue;
        const std::string text = string_at(find(block, "text"));
        if (text.empty()) return where + ": text content blocks must be non-empty";
        if (blank(text)) return where + ": text content blocks must contain non-whitespace text";
        if (j + 1 == content->Size()) last = find(block, "text")->GetString();
    }
    if (final_assistant && !last.empty() && kSpace.find(last.back()) != std::string_view::npos)
        return where + ": final assistant content cannot end with trailing whitespace";
    return std::nullopt;
}

/// A tool_use's id, or a tool_result's tool_use_id, outside ^[a-zA-Z0-9_-]+$
/// in message `at`'s content, in Anthropic's words; nullopt when none is.
std::optional<std::string> tool_id_refusal(const rapidjson::Value* content,
                                           rapidjson::SizeType at) {
    for (rapidjson::SizeType j = 0; content && content->IsArray() && j < content->Size(); ++j) {
        const std::string type = string_at(find((*content)[j], "type"));
        const char* key = type == "tool_use"      ? "id"
                          : type == "tool_result" ? "tool_use_id"
                                                  : nullptr;
        if (!key) continue;
        const std::string id = string_at(find((*content)[j], key));
        const bool fits = !id.empty() && id_bytes(id, "");
        if (!fits)
            return "messages." + std::to_string(at) + ".content." + std::to_string(j) + "." + type +
                   "." + key + ": String should match pattern '^[a-zA-Z0-9_-]+$'";
    }
    return std::nullopt;
}

/// A base64 image whose media type is none of the four Anthropic takes, in
/// message `at`'s content, in its words; nullopt when none is.
std::optional<std::string> image_type_refusal(const rapidjson::Value* content,
                                              rapidjson::SizeType at) {
    for (rapidjson::SizeType j = 0; content && content->IsArray() && j < content->Size(); ++j) {
        if (string_at(find((*content)[j], "type")) != "image") continue;
        const rapidjson::Value* source = find((*content)[j], "source");
        if (!source || string_at(find(*source, "type")) != "base64") continue;
        const std::string type = string_at(find(*source, "media_type"));
        if (type == "image/jpeg" || type == "image/png" || type == "image/gif" ||
            type == "image/webp")
            continue;
        return "messages." + std::to_string(at) + ".content." + std::to_string(j) +
               ".image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
               "'image/gif' or 'image/webp'";
    }
    return std::nullopt;
}

/// The ids of message `i`'s blocks of `type`, read at `key`.
std::vector<std::string> block_ids(const rapidjson::Value& messages, rapidjson::SizeType i,
                                   const char* type, const char* key) {
    std::vector<std::string> ids;
    const rapidjson::Value* content = i < messages.Size() ? find(messages[i], "content") : nullptr;
    for (rapidjson::SizeType j = 0; content && content->IsArray() && j < content->Size(); ++j)
        if (string_at(find((*content)[j], "type")) == type)
            ids.push_back(string_at(find((*content)[j], key)));
    return ids;
}

/// Anthropic's 400 for message `i`'s tool_use blocks without tool_result
/// blocks in the next message, or its tool_result blocks answering no
/// tool_use of the message before.
std::optional<std::string> tool_pairing_refusal(const rapidjson::Value& messages,
                                                rapidjson::SizeType i) {
    const std::vector<std::string> uses = block_ids(messages, i, "tool_use", "id");
    const std::vector<std::string> answers =
        block_ids(messages, i + 1, "tool_result", "tool_use_id");
    std::string missing;
    for (const std::string& id : uses)
        if (std::find(answers.begin(), answers.end(), id) == answers.end())
            missing += (missing.empty() ? "" : ", ") + id;
    if (!missing.empty())
        return "messages." + std::to_string(i) +
               ": `tool_use` ids were found without `tool_result` blocks immediately after: " +
               missing +
               ". Each `tool_use` block must have a corresponding `tool_result` block in the next "
               "message.";
    const std::vector<std::string> results = block_ids(messages, i, "tool_result", "tool_use_id");
    const std::vector<std::string> calls =
        i > 0 ? block_ids(messages, i - 1, "tool_use", "id") : std::vector<std::string>();
    for (const std::string& id : results)
        if (std::find(calls.begin(), calls.end(), id) == calls.end())
            return "messages." + std::to_string(i) +
                   ": unexpected `tool_use_id` found in `tool_result` blocks: " + id +
                   ". Each `tool_result` block must have a corresponding `tool_use` block in the "
                   "previous message.";
    return std::nullopt;
}

class AnthropicReply final : public ReplyFormat {
  public:
    void stream_frame(const Reply& r, std::string& token_head, std::vector<std::string>& before,
                      std::vector<std::string>& after) const override {
        token_head = R"({"type":"content_block_delta","index":)" +
                     std::to_string(anthropic_text_index(r)) +
                     R"(,"delta":{"type":"text_delta","text":)";
        anthropic_events(r, before, after);
    }

    void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                     std::uint64_t token, const std::string& text,
                     std::string& out) const override {
        (void)r;
        (void)at;
        (void)token;
        out = "event: content_block_delta\ndata: " + token_head + text + "}}\n\n";
    }

    bool holds_tool_result(const rapidjson::Value& doc) const override {
        const rapidjson::Value* messages = find(doc, "messages");
        if (!messages || !messages->IsArray()) return false;
        for (const auto& m : messages->GetArray()) {
            const rapidjson::Value* content = find(m, "content");
            if (!content || !content->IsArray()) continue;
            for (const auto& block : content->GetArray())
                if (string_at(find(block, "type")) == "tool_result") return true;
        }
        return false;
    }
    bool asks_reasoning(const rapidjson::Value& doc) const override {
        const rapidjson::Value* thinking = find(doc, "thinking");
        return thinking && string_at(find(*thinking, "type")) == "enabled";
    }
    /// A max_tokens below 1, and with thinking on a temperature but 1, a
    /// top_p below 0.95 or a forced tool choice, are refused in the API's words.
    /// With thinking on, an assistant turn with tool_use must start with its
    /// signed thinking block (or a redacted one, its data whole): the mock refuses the same as the
    /// API, so that a client that loses signatures fails against it as in production.
    std::optional<std::string> refusal_of(const rapidjson::Value& doc) const override {
        auto invalid = [](std::string_view why) {
            return anthropic_error("invalid_request_error", why);
        };
        if (const rapidjson::Value* limit = find(doc, "max_tokens");
            limit && limit->IsInt64() && limit->GetInt64() < 1)
            return invalid("max_tokens: Input should be greater than or equal to 1");
        if (number_above(&doc, "temperature", 1.0))
            return invalid("temperature: Input should be less than or equal to 1");
        // Tools: each name once, each input_schema of type object.
        const rapidjson::Value* tools = find(doc, "tools");
        for (rapidjson::SizeType i = 0; tools && tools->IsArray() && i < tools->Size(); ++i) {
            const std::string name = string_at(find((*tools)[i], "name"));
            for (rapidjson::SizeType j = 0; j < i; ++j)
                if (string_at(find((*tools)[j], "name")) == name)
                    return invalid("tools: Tool names must be unique.");
            const rapidjson::Value* schema = find((*tools)[i], "input_schema");
            if (schema && string_at(find(*schema, "type")) != "object")
                return invalid("tools." + std::to_string(i) +
                               ".custom.input_schema.type: Input should be 'object'");
        }
        if (auto why = text_refusal(find(doc, "system"), false, "system")) return invalid(*why);
        const rapidjson::Value* stops = find(doc, "stop_sequences");
        for (rapidjson::SizeType i = 0; stops && stops->IsArray() && i < stops->Size(); ++i) {
            const std::string stop = string_at(&(*stops)[i]);
            if (stop.empty())
                return invalid("stop_sequences: each stop sequence must be non-empty");
            if (blank(stop))
                return invalid("stop_sequences: each stop sequence must contain non-whitespace");
        }
        if (const rapidjson::Value* messages = find(doc, "messages");
            messages && messages->IsArray())
            for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
                const rapidjson::Value* content = find((*messages)[i], "content");
                const bool empty =
                    content && ((content->IsString() && content->GetStringLength() == 0) ||
                                (content->IsArray() && content->Empty()));
                const bool final_assistant = i + 1 == messages->Size() &&
                                             string_at(find((*messages)[i], "role")) == "assistant";
                if (empty && !final_assistant)
                    return invalid("messages." + std::to_string(i) +
                                   ": all messages must have non-empty content except for the "
                                   "optional final assistant message");
                if (auto why = text_refusal(content, final_assistant, "messages"))
                    return invalid(*why);
                if (auto why = tool_id_refusal(content, i)) return invalid(*why);
                if (auto why = image_type_refusal(content, i)) return invalid(*why);
                if (auto why = tool_pairing_refusal(*messages, i)) return invalid(*why);
            }
        if (!asks_reasoning(doc)) return std::nullopt;
        // Thinking takes no other temperature than 1, a top_p from 0.95, and
        // no tool choice that forces a call.
        if (const rapidjson::Value* t = find(doc, "temperature");
            t && t->IsNumber() && t->GetDouble() != 1.0)
            return invalid("`temperature` may only be set to 1 when thinking is enabled.");
        if (const rapidjson::Value* p = find(doc, "top_p");
            p && p->IsNumber() && p->GetDouble() < 0.95)
            return invalid(
                "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.");
        if (const rapidjson::Value* choice = find(doc, "tool_choice")) {
            const std::string type = string_at(find(*choice, "type"));
            if (type == "any" || type == "tool")
                return invalid("Thinking may not be enabled when tool_choice forces tool use.");
        }
        const rapidjson::Value* messages = find(doc, "messages");
        if (!messages || !messages->IsArray()) return std::nullopt;
        for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
            const rapidjson::Value* blocks = find((*messages)[i], "content");
            if (!blocks || !blocks->IsArray() || blocks->Empty()) continue;
            for (const auto& block : blocks->GetArray()) {
                if (string_at(find(block, "type")) != "tool_use") continue;
                const auto& head = (*blocks)[0];
                if (string_at(find(head, "type")) == "thinking" &&
                    !string_at(find(head, "signature")).empty())
                    continue;
                if (string_at(find(head, "type")) == "redacted_thinking" &&
                    !string_at(find(head, "data")).empty())
                    continue;
                const std::string why =
                    "messages." + std::to_string(i) +
                    ".content.0.type: Expected `thinking` or `redacted_thinking`, but found `" +
                    string_at(find(head, "type")) +
                    "`. When `thinking` is enabled, an assistant message with tool_use must "
                    "start with a thinking block (with its signature) or a redacted_thinking "
                    "block";
                return invalid(why);
            }
        }
        return std::nullopt;
    }
    const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                             bool& object_mode) const override {
        object_mode = false;  // Anthropic has no plain JSON mode
        const rapidjson::Value* config = find(doc, "output_config");
        const rapidjson::Value* format = config ? find(*config, "format") : nullptr;
        return format ? find(*format, "schema") : nullptr;
    }
    std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                           const std::string& first) const override {
        const rapidjson::Value* choice = find(doc, "tool_choice");
        const std::string type = choice ? string_at(find(*choice, "type")) : std::string();
        if (type == "none") return std::string();
        if (type == "any") return first;
        if (type == "tool") return string_at(find(*choice, "name"));
        return std::nullopt;
    }
    std::vector<std::string> stop_sequences(const rapidjson::Value& doc) const override {
        return strings_at(find(doc, "stop_sequences"));
    }

    void whole(const Reply& r, WholeBody& body) const override {
        body.head = R"({"id":"msg_mock","type":"message","role":"assistant","model":)" +
                    json_string(r.model) + R"(,"content":[)" +
                    (r.reasoning ? R"({"type":"thinking","thinking":)" + json_string(kReasoning) +
                                       R"(,"signature":)" + json_string(kSignature) + "},"
                                 : std::string()) +
                    R"({"type":"text","text":")";
        std::string tail = "\"}";
        if (!r.tool_name.empty())
            tail += R"(,{"type":"tool_use","id":"toolu_mock_1","name":)" +
                    json_string(r.tool_name) + R"(,"input":)" + kArguments + "}";
        body.tail = tail + "]" + R"(,"stop_reason":)" + stop_reason(r) + R"(,"stop_sequence":)" +
                    stop_sequence(r) + R"(,"usage":)" + anthropic_input(r) +
                    R"(,"output_tokens":)" + std::to_string(output_tokens(r)) + "}}";
    }
};

}  // namespace

const ReplyFormat& anthropic_reply() noexcept {
    static const AnthropicReply format;
    return format;
}

}  // namespace nous::http::mock
