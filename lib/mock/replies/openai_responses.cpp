// The mock's replies as the OpenAI Responses API: typed events around the
// output items, response.completed with the whole response.

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

// ---- the Responses API ------------------------------------------------------------
// Output items by index: the reasoning item (when asked), the message, the
// function call. The completed event repeats the whole response, its text
// included up to kCompletedTextTokens tokens (beyond, the text is left out of
// that one event so that memory stays bounded; the deltas carry it all).

constexpr std::int64_t kCompletedTextTokens = 10000;

int responses_message_index(const Reply& r) { return r.reasoning ? 1 : 0; }

std::string responses_event(const std::string& type, const std::string& body) {
    return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + body + "}\n\n";
}

std::string responses_text_head(const Reply& r) {
    return R"({"type":"response.output_text.delta","item_id":"msg_mock","output_index":)" +
           std::to_string(responses_message_index(r)) + R"(,"content_index":0,"sequence_number":)";
}

std::string responses_reasoning_item(bool done) {
    return R"({"id":"rs_mock","type":"reasoning","summary":[)" +
           (done ? R"({"type":"summary_text","text":)" + json_string(kReasoning) + "}"
                 : std::string()) +
           "]" + (done ? R"(,"encrypted_content":)" + json_string(kSignature) : std::string()) +
           "}";
}

std::string responses_call_item(const Reply& r, bool done) {
    return R"({"id":"fc_mock_1","type":"function_call","status":)" +
           std::string(done ? "\"completed\"" : "\"in_progress\"") + R"(,"arguments":)" +
           json_string(done ? kArguments : "") + R"(,"call_id":"call_mock_1","name":)" +
           json_string(r.tool_name) + "}";
}

/// `with_text` false: the text left empty (a whole body's generator fills it in).
std::string responses_message_item(const Reply& r, bool done, bool with_text = true) {
    std::string content;
    if (done)
        content = R"({"type":"output_text","text":)" +
                  json_string(with_text && r.tokens <= kCompletedTextTokens ? all_text(r) : "") +
                  R"(,"annotations":[]})" +
                  (r.refusal ? R"(,{"type":"refusal","refusal":)" + json_string(kRefusal) + "}"
                             : std::string());
    return R"({"id":"msg_mock","type":"message","status":)" +
           std::string(done ? "\"completed\"" : "\"in_progress\"") +
           R"(,"role":"assistant","content":[)" + content + "]}";
}

std::string responses_object(const Reply& r, bool done, bool with_text = true) {
    std::string output;
    if (done) {
        if (r.reasoning) output += responses_reasoning_item(true) + ",";
        output += responses_message_item(r, true, with_text);
        if (!r.tool_name.empty()) output += "," + responses_call_item(r, true);
    }
    return R"({"id":"resp_mock","object":"response","created_at":1700000000,"status":)" +
           std::string(done ? "\"completed\"" : "\"in_progress\"") + R"(,"model":)" +
           json_string(r.model) + R"(,"output":[)" + output + "]," +
           (done ? R"("usage":{"input_tokens":)" + std::to_string(r.prompt_tokens) +
                       R"(,"input_tokens_details":{"cached_tokens":)" +
                       std::to_string(r.cache_read) + R"(},"output_tokens":)" +
                       std::to_string(output_tokens(r)) +
                       R"(,"output_tokens_details":{"reasoning_tokens":)" +
                       std::to_string(r.reasoning ? 4 : 0) + R"(},"total_tokens":)" +
                       std::to_string(r.prompt_tokens + output_tokens(r)) + "}"
                 : std::string(R"("usage":null)")) +
           "}";
}

void responses_events(const Reply& r, std::vector<std::string>& before,
                      std::vector<std::string>& after) {
    // sequence_number counts every event; the tokens' are their position + 1.
    std::int64_t seq = 0;
    auto next_seq = [&] { return R"("sequence_number":)" + std::to_string(seq++) + ","; };
    before.push_back(responses_event("response.created",
                                     next_seq() + R"("response":)" + responses_object(r, false)));
    before.push_back(responses_event("response.in_progress",
                                     next_seq() + R"("response":)" + responses_object(r, false)));
    if (r.reasoning) {
        before.push_back(responses_event(
            "response.output_item.added",
            next_seq() + R"("output_index":0,"item":)" + responses_reasoning_item(false)));
        before.push_back(responses_event(
            "response.reasoning_summary_part.added",
            next_seq() +
                R"("item_id":"rs_mock","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""})"));
        for (const char* piece : kReasoningPieces)
            before.push_back(responses_event(
                "response.reasoning_summary_text.delta",
                next_seq() + R"("item_id":"rs_mock","output_index":0,"summary_index":0,"delta":)" +
                    json_string(piece)));
        before.push_back(responses_event(
            "response.output_item.done",
            next_seq() + R"("output_index":0,"item":)" + responses_reasoning_item(true)));
    }
    const std::string message_index = std::to_string(responses_message_index(r));
    before.push_back(responses_event("response.output_item.added",
                                     next_seq() + R"("output_index":)" + message_index +
                                         R"(,"item":)" + responses_message_item(r, false)));
    before.push_back(responses_event(
        "response.content_part.added",
        next_seq() + R"("item_id":"msg_mock","output_index":)" + message_index +
            R"(,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]})"));
    // The token events take the sequence numbers from here (their position).
    seq = static_cast<std::int64_t>(before.size()) + r.tokens;
    if (r.refusal)
        after.push_back(responses_event("response.refusal.delta",
                                        next_seq() + R"("item_id":"msg_mock","output_index":)" +
                                            message_index + R"(,"content_index":1,"delta":)" +
                                            json_string(kRefusal)));
    after.push_back(responses_event("response.output_item.done",
                                    next_seq() + R"("output_index":)" + message_index +
                                        R"(,"item":)" + responses_message_item(r, true)));
    if (!r.tool_name.empty()) {
        const std::string call_index = std::to_string(responses_message_index(r) + 1);
        after.push_back(responses_event("response.output_item.added",
                                        next_seq() + R"("output_index":)" + call_index +
                                            R"(,"item":)" + responses_call_item(r, false)));
        for (const char* piece : kArgumentPieces)
            after.push_back(responses_event("response.function_call_arguments.delta",
                                            next_seq() +
                                                R"("item_id":"fc_mock_1","output_index":)" +
                                                call_index + R"(,"delta":)" + json_string(piece)));
        after.push_back(responses_event("response.function_call_arguments.done",
                                        next_seq() + R"("item_id":"fc_mock_1","output_index":)" +
                                            call_index + R"(,"arguments":)" +
                                            json_string(kArguments)));
        after.push_back(responses_event("response.output_item.done",
                                        next_seq() + R"("output_index":)" + call_index +
                                            R"(,"item":)" + responses_call_item(r, true)));
    }
    after.push_back(responses_event("response.completed",
                                    next_seq() + R"("response":)" + responses_object(r, true)));
}

class ResponsesReply final : public ReplyFormat {
  public:
    void stream_frame(const Reply& r, std::string& token_head, std::vector<std::string>& before,
                      std::vector<std::string>& after) const override {
        token_head = responses_text_head(r);
        responses_events(r, before, after);
    }

    void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                     std::uint64_t token, const std::string& text,
                     std::string& out) const override {
        (void)r;
        (void)token;
        out = "event: response.output_text.delta\ndata: " + token_head + std::to_string(at) +
              R"(,"delta":)" + text + "}\n\n";
    }

    bool holds_tool_result(const rapidjson::Value& doc) const override {
        const rapidjson::Value* input = find(doc, "input");
        if (!input || !input->IsArray()) return false;
        for (const auto& item : input->GetArray())
            if (string_at(find(item, "type")) == "function_call_output") return true;
        return false;
    }
    bool asks_reasoning(const rapidjson::Value& doc) const override {
        return find(doc, "reasoning") != nullptr;
    }
    /// Its output limit takes 16 or more: a smaller one is its 400.
    std::optional<std::string> refusal_of(const rapidjson::Value& doc) const override {
        if (const rapidjson::Value* t = number_above(&doc, "temperature", 2.0))
            return openai_error(
                "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but "
                "got " +
                    number_text(*t) + " instead.",
                "invalid_request_error", "decimal_above_max_value", "temperature");
        // A call's id, on the call and on its output: 64 bytes at most.
        const rapidjson::Value* input = find(doc, "input");
        for (rapidjson::SizeType i = 0; input && input->IsArray() && i < input->Size(); ++i)
            if (const std::string id = string_at(find((*input)[i], "call_id")); id.size() > 64)
                return openai_too_long("input[" + std::to_string(i) + "].call_id", 64, id.size());
        return openai_below_min(doc, "max_output_tokens", 16);
    }
    const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                             bool& object_mode) const override {
        const rapidjson::Value* text = find(doc, "text");
        const rapidjson::Value* format = text ? find(*text, "format") : nullptr;
        const std::string type = format ? string_at(find(*format, "type")) : std::string();
        object_mode = type == "json_object";
        return type == "json_schema" ? find(*format, "schema") : nullptr;
    }
    std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                           const std::string& first) const override {
        return openai_tool_choice(doc, first);
    }
    std::vector<std::string> stop_sequences(const rapidjson::Value&) const override {
        return {};  // the Responses API has none
    }

    void whole(const Reply& r, WholeBody& body) const override {
        // The whole response with the message's text left open for the tokens.
        const std::string whole = responses_object(r, true, /*with_text=*/false);
        const std::string empty_text = R"("type":"output_text","text":")";
        const auto at = whole.find(empty_text) + empty_text.size();
        body.head = whole.substr(0, at);
        body.tail = whole.substr(at);
    }
};

}  // namespace

const ReplyFormat& responses_reply() noexcept {
    static const ResponsesReply format;
    return format;
}

}  // namespace nous::http::mock
