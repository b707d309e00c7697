#include "provider_formats.hpp"

#include <cstdio>

namespace nous::http::mock {

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

namespace {

// The tool call's arguments, and the pieces a stream sends them in.
const char* const kArguments = R"({"city": "Paris", "unit": "celsius"})";
const char* const kArgumentPieces[] = {R"({"city")", R"(: "Par)", R"(is", "un)", R"(it": "celsius"})"};

std::string text_of(const Reply& r) {
    std::string text;
    for (const auto& w : r.words) text += w;
    return text;
}

int output_tokens(const Reply& r) { return static_cast<int>(r.words.size()) + (r.tool_name.empty() ? 0 : 5); }

std::string sse(const std::string& data, const char* event = nullptr) {
    return (event ? std::string("event: ") + event + "\n" : std::string()) + "data: " + data + "\n\n";
}

std::vector<std::string> openai_stream(const Reply& r) {
    std::vector<std::string> out;
    const std::string head = R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
                             json_string(r.model) + R"(,"choices":[{"index":0,"delta":)";
    for (std::size_t i = 0; i < r.words.size(); ++i) {
        std::string delta = i == 0 ? R"({"role":"assistant","content":)" : R"({"content":)";
        out.push_back(sse(head + delta + json_string(r.words[i]) + R"(},"finish_reason":null}]})"));
    }
    if (!r.tool_name.empty()) {
        out.push_back(sse(head + R"({"tool_calls":[{"index":0,"id":"call_mock_1","type":"function","function":{"name":)" +
                          json_string(r.tool_name) + R"(,"arguments":""}}]},"finish_reason":null}]})"));
        for (const char* piece : kArgumentPieces)
            out.push_back(sse(head + R"({"tool_calls":[{"index":0,"function":{"arguments":)" + json_string(piece) +
                              R"(}}]},"finish_reason":null}]})"));
    }
    out.push_back(sse(head + R"({},"finish_reason":)" + (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") + "}]}"));
    if (r.include_usage)
        out.push_back(sse(R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
                          json_string(r.model) + R"(,"choices":[],"usage":{"prompt_tokens":)" +
                          std::to_string(r.prompt_tokens) + R"(,"completion_tokens":)" +
                          std::to_string(output_tokens(r)) + R"(,"total_tokens":)" +
                          std::to_string(r.prompt_tokens + output_tokens(r)) + "}}"));
    out.push_back("data: [DONE]\n\n");
    return out;
}

std::vector<std::string> anthropic_stream(const Reply& r) {
    std::vector<std::string> out;
    out.push_back(sse(R"({"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":)" +
                          json_string(r.model) +
                          R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":)" +
                          std::to_string(r.prompt_tokens) + R"(,"output_tokens":1}}})",
                      "message_start"));
    out.push_back(sse(R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
                      "content_block_start"));
    out.push_back(sse(R"({"type":"ping"})", "ping"));
    for (const auto& w : r.words)
        out.push_back(sse(R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":)" +
                              json_string(w) + "}}",
                          "content_block_delta"));
    out.push_back(sse(R"({"type":"content_block_stop","index":0})", "content_block_stop"));
    if (!r.tool_name.empty()) {
        out.push_back(sse(R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_mock_1","name":)" +
                              json_string(r.tool_name) + R"(,"input":{}}})",
                          "content_block_start"));
        for (const char* piece : kArgumentPieces)
            out.push_back(sse(R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":)" +
                                  json_string(piece) + "}}",
                              "content_block_delta"));
        out.push_back(sse(R"({"type":"content_block_stop","index":1})", "content_block_stop"));
    }
    out.push_back(sse(std::string(R"({"type":"message_delta","delta":{"stop_reason":)") +
                          (r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"") +
                          R"(,"stop_sequence":null},"usage":{"output_tokens":)" + std::to_string(output_tokens(r)) + "}}",
                      "message_delta"));
    out.push_back(sse(R"({"type":"message_stop"})", "message_stop"));
    return out;
}

std::string gemini_usage(const Reply& r) {
    return R"("usageMetadata":{"promptTokenCount":)" + std::to_string(r.prompt_tokens) + R"(,"candidatesTokenCount":)" +
           std::to_string(output_tokens(r)) + R"(,"totalTokenCount":)" +
           std::to_string(r.prompt_tokens + output_tokens(r)) + "}";
}

std::string gemini_call_part(const Reply& r) {
    return R"({"functionCall":{"name":)" + json_string(r.tool_name) + R"(,"args":)" + kArguments + "}}";
}

std::vector<std::string> gemini_stream(const Reply& r) {
    std::vector<std::string> out;
    for (const auto& w : r.words)
        out.push_back(sse(R"({"candidates":[{"content":{"parts":[{"text":)" + json_string(w) +
                          R"(}],"role":"model"},"index":0}],"modelVersion":)" + json_string(r.model) + "}"));
    std::string last = R"({"candidates":[{"content":{"parts":[)";
    last += r.tool_name.empty() ? R"({"text":""})" : gemini_call_part(r);
    last += R"(],"role":"model"},"finishReason":"STOP","index":0}],)" + gemini_usage(r) + "}";
    out.push_back(sse(last));
    return out;
}

}  // namespace

std::vector<std::string> stream_events(Format format, const Reply& reply) {
    switch (format) {
        case Format::openai: return openai_stream(reply);
        case Format::anthropic: return anthropic_stream(reply);
        case Format::gemini: return gemini_stream(reply);
    }
    return {};
}

std::string whole_body(Format format, const Reply& r) {
    const std::string text = text_of(r);
    switch (format) {
        case Format::openai: {
            std::string message = R"({"role":"assistant","content":)" + json_string(text);
            if (!r.tool_name.empty())
                message += R"(,"tool_calls":[{"id":"call_mock_1","type":"function","function":{"name":)" +
                           json_string(r.tool_name) + R"(,"arguments":)" + json_string(kArguments) + "}}]";
            message += "}";
            return R"({"id":"chatcmpl-mock","object":"chat.completion","created":1700000000,"model":)" +
                   json_string(r.model) + R"(,"choices":[{"index":0,"message":)" + message +
                   R"(,"finish_reason":)" + (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") +
                   R"(}],"usage":{"prompt_tokens":)" + std::to_string(r.prompt_tokens) + R"(,"completion_tokens":)" +
                   std::to_string(output_tokens(r)) + R"(,"total_tokens":)" +
                   std::to_string(r.prompt_tokens + output_tokens(r)) + "}}";
        }
        case Format::anthropic: {
            std::string content = R"([{"type":"text","text":)" + json_string(text) + "}";
            if (!r.tool_name.empty())
                content += R"(,{"type":"tool_use","id":"toolu_mock_1","name":)" + json_string(r.tool_name) +
                           R"(,"input":)" + kArguments + "}";
            content += "]";
            return R"({"id":"msg_mock","type":"message","role":"assistant","model":)" + json_string(r.model) +
                   R"(,"content":)" + content + R"(,"stop_reason":)" +
                   (r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"") +
                   R"(,"stop_sequence":null,"usage":{"input_tokens":)" + std::to_string(r.prompt_tokens) +
                   R"(,"output_tokens":)" + std::to_string(output_tokens(r)) + "}}";
        }
        case Format::gemini: {
            std::string parts = R"([{"text":)" + json_string(text) + "}";
            if (!r.tool_name.empty()) parts += "," + gemini_call_part(r);
            parts += "]";
            return R"({"candidates":[{"content":{"parts":)" + parts +
                   R"(,"role":"model"},"finishReason":"STOP","index":0}],)" + gemini_usage(r) +
                   R"(,"modelVersion":)" + json_string(r.model) + "}";
        }
    }
    return {};
}

}  // namespace nous::http::mock
