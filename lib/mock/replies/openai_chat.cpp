// The mock's replies as OpenAI chat completions: chunks ending with a
// finish_reason, the usage chunk when asked, then [DONE].

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

std::string openai_chunk_head(const Reply& r) {
    return R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
           json_string(r.model) + R"(,"choices":[{"index":0,"delta":)";
}

void openai_events(const Reply& r, std::vector<std::string>& before,
                   std::vector<std::string>& after) {
    const std::string head = openai_chunk_head(r);
    if (r.reasoning)  // as DeepSeek and vLLM stream it
        for (const char* piece : kReasoningPieces)
            before.push_back(sse(head + R"({"reasoning_content":)" + json_string(piece) +
                                 R"(},"finish_reason":null}]})"));
    if (!r.tool_name.empty()) {
        after.push_back(sse(
            head +
            R"({"tool_calls":[{"index":0,"id":"call_mock_1","type":"function","function":{"name":)" +
            json_string(r.tool_name) + R"(,"arguments":""}}]},"finish_reason":null}]})"));
        for (const char* piece : kArgumentPieces)
            after.push_back(sse(head + R"({"tool_calls":[{"index":0,"function":{"arguments":)" +
                                json_string(piece) + R"(}}]},"finish_reason":null}]})"));
    }
    if (r.refusal)
        after.push_back(
            sse(head + R"({"refusal":)" + json_string(kRefusal) + R"(},"finish_reason":null}]})"));
    after.push_back(sse(head + R"({},"finish_reason":)" +
                        (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") + "}]}"));
    if (r.include_usage)
        after.push_back(sse(
            R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
            json_string(r.model) + R"(,"choices":[],"usage":{"prompt_tokens":)" +
            std::to_string(r.prompt_tokens) + R"(,"prompt_tokens_details":{"cached_tokens":)" +
            std::to_string(r.cache_read) + R"(},"completion_tokens":)" +
            std::to_string(output_tokens(r)) + R"(,"total_tokens":)" +
            std::to_string(r.prompt_tokens + output_tokens(r)) + "}}"));
    after.push_back("data: [DONE]\n\n");
}

/// OpenAI's 400 for a tool call whose tool message does not follow it, or a
/// tool message that follows no call; nullopt when every call is answered.
std::optional<std::string> tool_pairing_refusal(const rapidjson::Value& doc) {
    const rapidjson::Value* messages = find(doc, "messages");
    if (!messages || !messages->IsArray()) return std::nullopt;
    const rapidjson::SizeType n = messages->Size();
    auto role = [&](rapidjson::SizeType i) { return string_at(find((*messages)[i], "role")); };
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        if (role(i) == "tool" &&
            (i == 0 || (role(i - 1) != "tool" && !find((*messages)[i - 1], "tool_calls"))))
            return openai_error(
                "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                "message with 'tool_calls'.",
                "invalid_request_error", "", "messages.[" + std::to_string(i) + "].role");
        const rapidjson::Value* calls = find((*messages)[i], "tool_calls");
        if (role(i) != "assistant" || !calls || !calls->IsArray()) continue;
        std::string missing;
        for (const auto& call : calls->GetArray()) {
            const std::string id = string_at(find(call, "id"));
            bool answered = false;
            for (rapidjson::SizeType j = i + 1; j < n && role(j) == "tool"; ++j)
                answered = answered || string_at(find((*messages)[j], "tool_call_id")) == id;
            if (!answered) missing += (missing.empty() ? "" : ", ") + id;
        }
        if (!missing.empty())
            return openai_error(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                "response messages: " +
                    missing,
                "invalid_request_error", "", "messages.[" + std::to_string(i) + "].role");
    }
    return std::nullopt;
}

class OpenAIReply final : public ReplyFormat {
  public:
    void stream_frame(const Reply& r, std::string& token_head, std::vector<std::string>& before,
                      std::vector<std::string>& after) const override {
        token_head = openai_chunk_head(r);
        openai_events(r, before, after);
    }

    void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                     std::uint64_t token, const std::string& text,
                     std::string& out) const override {
        (void)r;
        (void)at;
        out = "data: " + token_head +
              (token == 0 ? R"({"role":"assistant","content":)" : R"({"content":)") + text +
              R"(},"finish_reason":null}]})" + "\n\n";
    }

    std::string first_tool(const rapidjson::Value& doc) const override {
        const rapidjson::Value* tools = find(doc, "tools");
        if (!tools || !tools->IsArray() || tools->Empty()) return {};
        const rapidjson::Value* function = find((*tools)[0], "function");
        return string_at(find(function ? *function : (*tools)[0], "name"));
    }
    bool holds_tool_result(const rapidjson::Value& doc) const override {
        const rapidjson::Value* messages = find(doc, "messages");
        if (!messages || !messages->IsArray()) return false;
        for (const auto& m : messages->GetArray())
            if (string_at(find(m, "role")) == "tool") return true;
        return false;
    }
    bool asks_reasoning(const rapidjson::Value& doc) const override {
        return find(doc, "reasoning_effort") != nullptr;
    }
    /// parallel_tool_calls without tools, and an output limit below 1, in the
    /// API's words. (A body with no messages is answered all the same: a bare
    /// {"stream":true} is how scripts and tests ask the mock for a stream.)
    std::optional<std::string> refusal_of(const rapidjson::Value& doc) const override {
        const rapidjson::Value* tools = find(doc, "tools");
        if (find(doc, "parallel_tool_calls") && !(tools && tools->IsArray() && !tools->Empty()))
            return openai_error(
                "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed "
                "when 'tools' are specified.",
                "invalid_request_error", "invalid_value", "parallel_tool_calls");
        // "A max of 128 functions are supported."
        if (tools && tools->IsArray() && tools->Size() > 128)
            return openai_too_long("tools", 128, tools->Size(), "array");
        if (find(doc, "tool_choice") && !(tools && tools->IsArray() && !tools->Empty()))
            return openai_error(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
                "specified.",
                "invalid_request_error", "invalid_value", "tool_choice");
        if (auto below = openai_below_min(doc, "max_tokens", 1)) return below;
        if (auto gap = tool_pairing_refusal(doc)) return gap;
        // A tool call's id: 40 bytes at most.
        const rapidjson::Value* messages = find(doc, "messages");
        for (rapidjson::SizeType i = 0; messages && messages->IsArray() && i < messages->Size();
             ++i) {
            const rapidjson::Value* calls = find((*messages)[i], "tool_calls");
            for (rapidjson::SizeType j = 0; calls && calls->IsArray() && j < calls->Size(); ++j)
                if (const std::string id = string_at(find((*calls)[j], "id")); id.size() > 40)
                    return openai_too_long("messages[" + std::to_string(i) + "].tool_calls[" +
                                               std::to_string(j) + "].id",
                                           40, id.size());
        }
        return openai_below_min(doc, "max_completion_tokens", 1);
    }
    bool includes_usage(const rapidjson::Value& doc) const override {
        const rapidjson::Value* options = find(doc, "stream_options");
        const rapidjson::Value* usage = options ? find(*options, "include_usage") : nullptr;
        return usage && usage->IsBool() && usage->GetBool();
    }
    const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                             bool& object_mode) const override {
        const rapidjson::Value* format = find(doc, "response_format");
        const std::string type = format ? string_at(find(*format, "type")) : std::string();
        object_mode = type == "json_object";
        const rapidjson::Value* spec =
            type == "json_schema" ? find(*format, "json_schema") : nullptr;
        return spec ? find(*spec, "schema") : nullptr;
    }
    std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                           const std::string& first) const override {
        return openai_tool_choice(doc, first);
    }
    std::vector<std::string> stop_sequences(const rapidjson::Value& doc) const override {
        return strings_at(find(doc, "stop"));
    }

    void whole(const Reply& r, WholeBody& body) const override {
        body.head =
            R"({"id":"chatcmpl-mock","object":"chat.completion","created":1700000000,"model":)" +
            json_string(r.model) + R"(,"choices":[{"index":0,"message":{"role":"assistant",)" +
            (r.reasoning ? R"("reasoning_content":)" + json_string(kReasoning) + ","
                         : std::string()) +
            (r.refusal ? R"("refusal":)" + json_string(kRefusal) + "," : std::string()) +
            R"("content":")";
        std::string tail = "\"";
        if (!r.tool_name.empty())
            tail += R"(,"tool_calls":[{"id":"call_mock_1","type":"function","function":{"name":)" +
                    json_string(r.tool_name) + R"(,"arguments":)" + json_string(kArguments) + "}}]";
        tail += "}";
        body.tail =
            tail + R"(,"finish_reason":)" + (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") +
            R"(}],"usage":{"prompt_tokens":)" + std::to_string(r.prompt_tokens) +
            R"(,"prompt_tokens_details":{"cached_tokens":)" + std::to_string(r.cache_read) + "}" +
            R"(,"completion_tokens":)" + std::to_string(output_tokens(r)) + R"(,"total_tokens":)" +
            std::to_string(r.prompt_tokens + output_tokens(r)) + "}}";
    }
};

}  // namespace

const ReplyFormat& openai_reply() noexcept {
    static const OpenAIReply format;
    return format;
}

}  // namespace nous::http::mock
