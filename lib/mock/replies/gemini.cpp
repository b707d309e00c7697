// The mock's replies as Gemini generateContent: chunks of candidates, the
// last with its finishReason and usageMetadata.

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

std::string gemini_usage(const Reply& r) {
    return R"("usageMetadata":{"promptTokenCount":)" + std::to_string(r.prompt_tokens) +
           R"(,"candidatesTokenCount":)" + std::to_string(output_tokens(r)) +
           R"(,"totalTokenCount":)" + std::to_string(r.prompt_tokens + output_tokens(r)) + "}";
}

/// The signature of a thinking reply goes on its call's part, or its last part.
std::string gemini_signature(const Reply& r) {
    return r.reasoning ? R"(,"thoughtSignature":)" + json_string(kSignature) : std::string();
}

std::string gemini_call_part(const Reply& r) {
    return R"({"functionCall":{"name":)" + json_string(r.tool_name) + R"(,"args":)" + kArguments +
           "}" + gemini_signature(r) + "}";
}

std::string gemini_thought_part() {
    return R"({"text":)" + json_string(kReasoning) + R"(,"thought":true})";
}

void gemini_events(const Reply& r, std::vector<std::string>& before,
                   std::vector<std::string>& after) {
    if (r.reasoning)
        before.push_back(sse(R"({"candidates":[{"content":{"parts":[)" + gemini_thought_part() +
                             R"(],"role":"model"},"index":0}]})"));
    std::string last = R"({"candidates":[{"content":{"parts":[)";
    last += r.tool_name.empty() ? R"({"text":"")" + gemini_signature(r) + "}" : gemini_call_part(r);
    last += R"(],"role":"model"},"finishReason":"STOP","index":0}],)" + gemini_usage(r) + "}";
    after.push_back(sse(last));
}

/// Gemini's 400 for a turn with no parts, or a text part that is empty (one
/// that carries a thought signature is the model's own, sent back).
std::optional<std::string> empty_part(const rapidjson::Value& doc) {
    const rapidjson::Value* contents = find(doc, "contents");
    if (!contents || !contents->IsArray()) return std::nullopt;
    for (rapidjson::SizeType i = 0; i < contents->Size(); ++i) {
        const rapidjson::Value* parts = find((*contents)[i], "parts");
        if (parts && parts->IsArray() && parts->Empty())
            return gemini_error(400,
                                "* GenerateContentRequest.contents[" + std::to_string(i) +
                                    "].parts: contents.parts must not be empty.\n",
                                "INVALID_ARGUMENT");
        for (rapidjson::SizeType j = 0; parts && parts->IsArray() && j < parts->Size(); ++j) {
            const rapidjson::Value* text = find((*parts)[j], "text");
            if (text && text->IsString() && text->GetStringLength() == 0 &&
                !find((*parts)[j], "thoughtSignature"))
                return gemini_error(400,
                                    "Unable to submit request because it has an empty text "
                                    "parameter. Add a value to the parameter and try again. Learn "
                                    "more: https://cloud.google.com/vertex-ai/generative-ai/docs/"
                                    "model-reference/gemini",
                                    "INVALID_ARGUMENT");
        }
    }
    return std::nullopt;
}

class GeminiReply final : public ReplyFormat {
  public:
    void stream_frame(const Reply& r, std::string& token_head, std::vector<std::string>& before,
                      std::vector<std::string>& after) const override {
        (void)r;
        token_head = R"({"candidates":[{"content":{"parts":[{"text":)";
        gemini_events(r, before, after);
    }

    void token_event(const Reply& r, const std::string& token_head, std::uint64_t at,
                     std::uint64_t token, const std::string& text,
                     std::string& out) const override {
        (void)at;
        (void)token;
        out = "data: " + token_head + text + R"(}],"role":"model"},"index":0}],"modelVersion":)" +
              json_string(r.model) + "}\n\n";
    }

    bool streamed(const rapidjson::Value&, bool by_url) const override {
        return by_url;  // :streamGenerateContent, not a body field
    }
    std::string first_tool(const rapidjson::Value& doc) const override {
        const rapidjson::Value* tools = find(doc, "tools");
        if (!tools || !tools->IsArray() || tools->Empty()) return {};
        const rapidjson::Value* declarations = find((*tools)[0], "functionDeclarations");
        if (declarations && declarations->IsArray() && !declarations->Empty())
            return string_at(find((*declarations)[0], "name"));
        return string_at(find((*tools)[0], "name"));
    }
    bool holds_tool_result(const rapidjson::Value& doc) const override {
        const rapidjson::Value* contents = find(doc, "contents");
        if (!contents || !contents->IsArray()) return false;
        for (const auto& turn : contents->GetArray()) {
            const rapidjson::Value* parts = find(turn, "parts");
            if (!parts || !parts->IsArray()) continue;
            for (const auto& part : parts->GetArray())
                if (find(part, "functionResponse")) return true;
        }
        return false;
    }
    bool asks_reasoning(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "generationConfig");
        return config && find(*config, "thinkingConfig");
    }
    /// With thinking on, each functionCall part must carry its
    /// thoughtSignature back: refused as the API refuses it.
    std::optional<std::string> refusal_of(const rapidjson::Value& doc) const override {
        if (const rapidjson::Value* t =
                number_above(find(doc, "generationConfig"), "temperature", 2.0))
            return gemini_error(400,
                                "Unable to submit request because it has a temperature value of " +
                                    number_text(*t) +
                                    " but the supported range is from 0 (inclusive) to 2.0001 "
                                    "(exclusive). Update the value and try again.",
                                "INVALID_ARGUMENT");
        if (auto empty = empty_part(doc)) return empty;
        const rapidjson::Value* contents = find(doc, "contents");
        if (!asks_reasoning(doc) || !contents || !contents->IsArray()) return std::nullopt;
        for (rapidjson::SizeType i = 0; i < contents->Size(); ++i) {
            const rapidjson::Value* parts = find((*contents)[i], "parts");
            if (!parts || !parts->IsArray()) continue;
            for (rapidjson::SizeType j = 0; j < parts->Size(); ++j) {
                const auto& part = (*parts)[j];
                if (!find(part, "functionCall") ||
                    !string_at(find(part, "thoughtSignature")).empty())
                    continue;
                const std::string why =
                    "Function call is missing a thought_signature in functionCall parts "
                    "(contents[" +
                    std::to_string(i) + "].parts[" + std::to_string(j) + "])";
                return gemini_error(400, why, "INVALID_ARGUMENT");
            }
        }
        return std::nullopt;
    }
    const rapidjson::Value* requested_schema(const rapidjson::Value& doc,
                                             bool& object_mode) const override {
        const rapidjson::Value* config = find(doc, "generationConfig");
        const rapidjson::Value* schema = config ? find(*config, "responseJsonSchema") : nullptr;
        if (!schema && config) schema = find(*config, "responseSchema");
        object_mode =
            !schema && config && string_at(find(*config, "responseMimeType")) == "application/json";
        return schema;
    }
    std::optional<std::string> chosen_tool(const rapidjson::Value& doc,
                                           const std::string& first) const override {
        const rapidjson::Value* config = find(doc, "toolConfig");
        const rapidjson::Value* calling = config ? find(*config, "functionCallingConfig") : nullptr;
        const std::string mode = calling ? string_at(find(*calling, "mode")) : std::string();
        if (mode == "NONE") return std::string();
        if (mode != "ANY") return std::nullopt;
        const auto allowed = strings_at(find(*calling, "allowedFunctionNames"));
        return allowed.empty() ? first : allowed.front();
    }
    std::vector<std::string> stop_sequences(const rapidjson::Value& doc) const override {
        const rapidjson::Value* config = find(doc, "generationConfig");
        return config ? strings_at(find(*config, "stopSequences")) : std::vector<std::string>();
    }
    bool has_refusal() const override { return false; }  // no refusal field

    void whole(const Reply& r, WholeBody& body) const override {
        body.head = R"({"candidates":[{"content":{"parts":[)" +
                    (r.reasoning ? gemini_thought_part() + "," : std::string()) + R"({"text":")";
        std::string tail = "\"" + (r.tool_name.empty() ? gemini_signature(r) : "") + "}";
        if (!r.tool_name.empty()) tail += "," + gemini_call_part(r);
        body.tail = tail + "]" + R"(,"role":"model"},"finishReason":"STOP","index":0}],)" +
                    gemini_usage(r) + R"(,"modelVersion":)" + json_string(r.model) + "}";
    }
};

}  // namespace

const ReplyFormat& gemini_reply() noexcept {
    static const GeminiReply format;
    return format;
}

}  // namespace nous::http::mock
