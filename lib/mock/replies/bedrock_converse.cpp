// The mock's replies as Bedrock Converse: whole (output.message.content,
// stopReason, usage), and streamed as AWS event-stream messages
// (messageStart, reasoning and text content blocks, a toolUse block,
// messageStop, metadata with the usage), each message one binary frame.

#include "finite_numbers.hpp"
#include "nous/http/decoder.hpp"
#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

std::string frame(const char* event_type, const std::string& payload) {
    return encode_aws_event_stream_message({{":event-type", event_type},
                                            {":content-type", "application/json"},
                                            {":message-type", "event"}},
                                           payload);
}

std::string stop_reason(const Reply& r) {
    if (!r.stop_sequence.empty()) return "\"stop_sequence\"";
    return r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"";
}

int text_index(const Reply& r) { return r.reasoning ? 1 : 0; }

std::string usage(const Reply& r) {
    return R"({"inputTokens":)" + std::to_string(r.prompt_tokens - r.cache_read - r.cache_write) +
           R"(,"cacheReadInputTokens":)" + std::to_string(r.cache_read) +
           R"(,"cacheWriteInputTokens":)" + std::to_string(r.cache_write) + R"(,"outputTokens":)" +
           std::to_string(output_tokens(r)) + R"(,"totalTokens":)" +
           std::to_string(r.prompt_tokens + output_tokens(r)) + "}";
}

/// A toolUse's or toolResult's toolUseId outside the service model's
/// ToolUseId ([a-zA-Z0-9_.:-], 1 to 64) in message `at`'s content, in its
/// validation message (lists counted from 1); nullopt when none is.
std::optional<std::string> tool_use_id_refusal(const rapidjson::Value* content,
                                               rapidjson::SizeType at) {
    for (rapidjson::SizeType j = 0; content && content->IsArray() && j < content->Size(); ++j)
        for (const char* block : {"toolUse", "toolResult"}) {
            const rapidjson::Value* b = find((*content)[j], block);
            if (!b) continue;
            const std::string id = string_at(find(*b, "toolUseId"));
            const bool pattern = id_bytes(id, ".:");
            if (pattern && !id.empty() && id.size() <= 64) continue;
            return "1 validation error detected: Value '" + id + "' at 'messages." +
                   std::to_string(at + 1) + ".member.content." + std::to_string(j + 1) +
                   ".member." + block + ".toolUseId' failed to satisfy constraint: " +
                   (pattern && !id.empty()
                        ? "Member must have length less than or equal to 64"
                        : "Member must satisfy regular expression pattern: [a-zA-Z0-9_.:-]+");
        }
    return std::nullopt;
}

/// Whether a message's content holds a toolUse or toolResult block.
bool has_tool_block(const rapidjson::Value* content) {
    for (rapidjson::SizeType j = 0; content && content->IsArray() && j < content->Size(); ++j)
        if (find((*content)[j], "toolUse") || find((*content)[j], "toolResult")) return true;
    return false;
}

class BedrockReply final : public ReplyFormat {
  public:
    void stream_frame(const Reply& r, std::string& token_head, std::vector<std::string>& before,
                      std::vector<std::string>& after) const override {
        token_head =
            R"({"contentBlockIndex":)" + std::to_string(text_index(r)) + R"(,"delta":{"text":)";
        before.push_back(frame("messageStart", R"({"role":"assistant"})"));
        if (r.reasoning) {
            for (const char* piece : kReasoningPieces)
                before.push_back(
                    frame("contentBlockDelta",
                          R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"text":)" +
                              json_string(piece) + "}}}"));
            before.push_back(
                frame("contentBlockDelta",
                      R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":)" +
                          json_string(kSignature) + "}}}"));
            before.push_back(frame("contentBlockStop", R"({"contentBlockIndex":0})"));
        }
        const std::string index = std::to_string(text_index(r));
        after.push_back(frame("contentBlockStop", R"({"contentBlockIndex":)" + index + "}"));
        if (!r.tool_name.empty()) {
            const std::string call = std::to_string(text_index(r) + 1);
            after.push_back(
                frame("contentBlockStart",
                      R"({"contentBlockIndex":)" + call +
                          R"(,"start":{"toolUse":{"toolUseId":"tooluse_mock_1","name":)" +
                          json_string(r.tool_name) + "}}}"));
            for (const char* piece : kArgumentPieces)
                after.push_back(frame("contentBlockDelta", R"({"contentBlockIndex":)" + call +
                                                               R"(,"delta":{"toolUse":{"input":)" +
                                                               json_string(piece) + "}}}"));
            after.push_back(frame("contentBlockStop", R"({"contentBlockIndex":)" + call + "}"));
        }
        after.push_back(frame("messageStop", R"({"stopReason":)" + stop_reason(r) + "}"));
        after.push_back(
            frame("metadata", R"({"usage":)" + usage(r) + R"(,"metrics":{"latencyMs":1}})"));
    }

    void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                     std::uint64_t token, const std::string& text,
                     std::string& out) const override {
        (void)r;
        (void)at;
        (void)token;
        out = frame("contentBlockDelta", token_head + text + "}}");
    }

    void whole(const Reply& r, WholeBody& body) const override {
        body.head = std::string(R"({"output":{"message":{"role":"assistant","content":[)") +
                    (r.reasoning ? R"({"reasoningContent":{"reasoningText":{"text":)" +
                                       json_string(kReasoning) + R"(,"signature":)" +
                                       json_string(kSignature) + "}}},"
                                 : std::string()) +
                    R"({"text":")";
        std::string tail = "\"}";
        if (!r.tool_name.empty())
            tail += R"(,{"toolUse":{"toolUseId":"tooluse_mock_1","name":)" +
                    json_string(r.tool_name) + R"(,"input":)" + kArguments + "}}";
        body.tail = tail + R"(]}},"stopReason":)" + stop_reason(r) + R"(,"usage":)" + usage(r) +
                    R"(,"metrics":{"latencyMs":1}})";
    }

    bool streamed(const rapidjson::Value& doc, bool by_url) const override {
        (void)doc;
        return by_url;  // converse-stream
    }
    std::string first_tool(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "toolConfig");
        const rapidjson::Value* tools = config ? find(*config, "tools") : nullptr;
        if (!tools || !tools->IsArray() || tools->Empty()) return {};
        const rapidjson::Value* spec = find((*tools)[0], "toolSpec");
        return spec ? string_at(find(*spec, "name")) : std::string();
    }
    bool holds_tool_result(const rapidjson::Value& doc) const override {
        const rapidjson::Value* messages = find(doc, "messages");
        if (!messages || !messages->IsArray()) return false;
        for (const auto& m : messages->GetArray()) {
            const rapidjson::Value* content = find(m, "content");
            if (!content || !content->IsArray()) continue;
            for (const auto& block : content->GetArray())
                if (find(block, "toolResult")) return true;
        }
        return false;
    }
    bool asks_reasoning(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "outputConfig");
        return config && find(*config, "effort");
    }
    const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                             bool& object_mode) const override {
        object_mode = false;
        const rapidjson::Value* config = find(doc, "outputConfig");
        const rapidjson::Value* format = config ? find(*config, "textFormat") : nullptr;
        const rapidjson::Value* structure = format ? find(*format, "structure") : nullptr;
        const rapidjson::Value* json = structure ? find(*structure, "jsonSchema") : nullptr;
        const rapidjson::Value* text = json ? find(*json, "schema") : nullptr;
        if (!text || !text->IsString()) return nullptr;
        // Converse sends the schema as a string: parsed here, kept for this
        // connection's thread until its next request (read at once by the caller).
        thread_local rapidjson::Document parsed;
        parsed.Parse<rapidjson::kParseIterativeFlag>(text->GetString(), text->GetStringLength());
        // A schema past a double's range is no schema, as one that is not JSON.
        return parsed.HasParseError() || !parsed.IsObject() || !numbers_finite(parsed) ? nullptr
                                                                                       : &parsed;
    }
    std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                           const std::string& first) const override {
        const rapidjson::Value* config = find(doc, "toolConfig");
        const rapidjson::Value* choice = config ? find(*config, "toolChoice") : nullptr;
        if (!choice) return std::nullopt;
        if (find(*choice, "any")) return first;
        if (const rapidjson::Value* tool = find(*choice, "tool"))
            return string_at(find(*tool, "name"));
        return std::nullopt;
    }
    std::vector<std::string> stop_sequences(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "inferenceConfig");
        return config ? strings_at(find(*config, "stopSequences")) : std::vector<std::string>{};
    }
    /// The service model's bounds, in its validation message (the request's
    /// lists counted from 1); read_chat adds the ValidationException header.
    std::optional<std::string> refusal_of(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "inferenceConfig");
        if (const rapidjson::Value* t = number_above(config, "temperature", 1.0))
            return bedrock_error("1 validation error detected: Value '" + number_text(*t) +
                                 "' at 'inferenceConfig.temperature' failed to satisfy "
                                 "constraint: Member must have value less than or equal to 1");
        const rapidjson::Value* stops = config ? find(*config, "stopSequences") : nullptr;
        for (rapidjson::SizeType i = 0; stops && stops->IsArray() && i < stops->Size(); ++i)
            if ((*stops)[i].IsString() && (*stops)[i].GetStringLength() == 0)
                return bedrock_error(
                    "1 validation error detected: Value '' at 'inferenceConfig.stopSequences." +
                    std::to_string(i + 1) +
                    ".member' failed to satisfy constraint: Member must have length greater than "
                    "or equal to 1");
        const rapidjson::Value* messages = find(doc, "messages");
        const bool tools_configured = find(doc, "toolConfig") != nullptr;
        for (rapidjson::SizeType i = 0; messages && messages->IsArray() && i < messages->Size();
             ++i) {
            const rapidjson::Value* content = find((*messages)[i], "content");
            if (!tools_configured && has_tool_block(content))
                return bedrock_error(
                    "The toolConfig field must be defined when using toolUse and toolResult "
                    "content blocks.");
            if (content && content->IsArray() && content->Empty())
                return bedrock_error("The content field in the Message object at messages." +
                                     std::to_string(i) +
                                     " is empty. Add a ContentBlock object to the content field "
                                     "and try again.");
            if (auto why = tool_use_id_refusal(content, i)) return bedrock_error(*why);
        }
        return std::nullopt;
    }
    bool has_refusal() const override { return false; }
};

}  // namespace

const ReplyFormat& bedrock_reply() noexcept {
    static const BedrockReply format;
    return format;
}

}  // namespace nous::http::mock
