// The mock's replies in each provider's format, generated as they are sent.

#include "provider_formats.hpp"

#include <algorithm>
#include <cstdio>

namespace nous::http::mock {

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
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

const char* const kWords[] = {"Hello",   " from", " the",       " nous",   "-http", " mock",
                              " server", ".",     " Tokens",    " arrive", " one",  " by",
                              " one",    " as",   " requested", "!"};
constexpr std::int64_t kCycle = 16;

// The tool call's arguments, and the pieces a stream sends them in.
const char* const kArguments = R"({"city": "Paris", "unit": "celsius"})";
const char* const kArgumentPieces[] = {R"({"city")", R"(: "Par)", R"(is", "un)",
                                       R"(it": "celsius"})"};

/// Bytes of the text of tokens [0, n).
std::uint64_t text_length(std::int64_t n) {
    std::uint64_t cycle = 0, partial = 0;
    for (std::int64_t i = 0; i < kCycle; ++i) {
        const std::uint64_t len = std::char_traits<char>::length(kWords[i]);
        cycle += len;
        if (i < n % kCycle) partial += len;
    }
    return static_cast<std::uint64_t>(n / kCycle) * cycle + partial;
}

std::int64_t output_tokens(const Reply& r) { return r.tokens + (r.tool_name.empty() ? 0 : 5); }

std::string sse(const std::string& data, const char* event = nullptr) {
    return (event ? std::string("event: ") + event + "\n" : std::string()) + "data: " + data +
           "\n\n";
}

std::string openai_chunk_head(const Reply& r) {
    return R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
           json_string(r.model) + R"(,"choices":[{"index":0,"delta":)";
}

void openai_events(const Reply& r, std::vector<std::string>& after) {
    const std::string head = openai_chunk_head(r);
    if (!r.tool_name.empty()) {
        after.push_back(sse(
            head +
            R"({"tool_calls":[{"index":0,"id":"call_mock_1","type":"function","function":{"name":)" +
            json_string(r.tool_name) + R"(,"arguments":""}}]},"finish_reason":null}]})"));
        for (const char* piece : kArgumentPieces)
            after.push_back(sse(head + R"({"tool_calls":[{"index":0,"function":{"arguments":)" +
                                json_string(piece) + R"(}}]},"finish_reason":null}]})"));
    }
    after.push_back(sse(head + R"({},"finish_reason":)" +
                        (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") + "}]}"));
    if (r.include_usage)
        after.push_back(sse(
            R"({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":)" +
            json_string(r.model) + R"(,"choices":[],"usage":{"prompt_tokens":)" +
            std::to_string(r.prompt_tokens) + R"(,"completion_tokens":)" +
            std::to_string(output_tokens(r)) + R"(,"total_tokens":)" +
            std::to_string(r.prompt_tokens + output_tokens(r)) + "}}"));
    after.push_back("data: [DONE]\n\n");
}

void anthropic_events(const Reply& r, std::vector<std::string>& before,
                      std::vector<std::string>& after) {
    before.push_back(sse(
        R"({"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":)" +
            json_string(r.model) +
            R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":)" +
            std::to_string(r.prompt_tokens) + R"(,"output_tokens":1}}})",
        "message_start"));
    before.push_back(
        sse(R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
            "content_block_start"));
    before.push_back(sse(R"({"type":"ping"})", "ping"));
    after.push_back(sse(R"({"type":"content_block_stop","index":0})", "content_block_stop"));
    if (!r.tool_name.empty()) {
        after.push_back(sse(
            R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_mock_1","name":)" +
                json_string(r.tool_name) + R"(,"input":{}}})",
            "content_block_start"));
        for (const char* piece : kArgumentPieces)
            after.push_back(sse(
                R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":)" +
                    json_string(piece) + "}}",
                "content_block_delta"));
        after.push_back(sse(R"({"type":"content_block_stop","index":1})", "content_block_stop"));
    }
    after.push_back(sse(std::string(R"({"type":"message_delta","delta":{"stop_reason":)") +
                            (r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"") +
                            R"(,"stop_sequence":null},"usage":{"output_tokens":)" +
                            std::to_string(output_tokens(r)) + "}}",
                        "message_delta"));
    after.push_back(sse(R"({"type":"message_stop"})", "message_stop"));
}

std::string gemini_usage(const Reply& r) {
    return R"("usageMetadata":{"promptTokenCount":)" + std::to_string(r.prompt_tokens) +
           R"(,"candidatesTokenCount":)" + std::to_string(output_tokens(r)) +
           R"(,"totalTokenCount":)" + std::to_string(r.prompt_tokens + output_tokens(r)) + "}";
}

std::string gemini_call_part(const Reply& r) {
    return R"({"functionCall":{"name":)" + json_string(r.tool_name) + R"(,"args":)" + kArguments +
           "}}";
}

void gemini_events(const Reply& r, std::vector<std::string>& after) {
    std::string last = R"({"candidates":[{"content":{"parts":[)";
    last += r.tool_name.empty() ? R"({"text":""})" : gemini_call_part(r);
    last += R"(],"role":"model"},"finishReason":"STOP","index":0}],)" + gemini_usage(r) + "}";
    after.push_back(sse(last));
}

}  // namespace

std::string_view word(std::int64_t i) noexcept { return kWords[i % kCycle]; }

EventStream::EventStream(Format format, Reply reply) : format_(format), reply_(std::move(reply)) {
    switch (format_) {
        case Format::openai:
            token_head_ = openai_chunk_head(reply_);
            openai_events(reply_, epilogue_);
            break;
        case Format::anthropic:
            token_head_ =
                R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":)";
            anthropic_events(reply_, prologue_, epilogue_);
            break;
        case Format::gemini:
            token_head_ = R"({"candidates":[{"content":{"parts":[{"text":)";
            gemini_events(reply_, epilogue_);
            break;
    }
}

bool EventStream::next(std::string& out) {
    const std::size_t at = position_++;
    if (at < prologue_.size()) {
        out = prologue_[at];
        return true;
    }
    const std::uint64_t token = at - prologue_.size();
    if (token < static_cast<std::uint64_t>(reply_.tokens)) {
        const std::string text = json_string(word(static_cast<std::int64_t>(token)));
        out.clear();
        switch (format_) {
            case Format::openai:
                out = "data: " + token_head_ +
                      (token == 0 ? R"({"role":"assistant","content":)" : R"({"content":)") + text +
                      R"(},"finish_reason":null}]})" + "\n\n";
                break;
            case Format::anthropic:
                out = "event: content_block_delta\ndata: " + token_head_ + text + "}}\n\n";
                break;
            case Format::gemini:
                out = "data: " + token_head_ + text +
                      R"(}],"role":"model"},"index":0}],"modelVersion":)" +
                      json_string(reply_.model) + "}\n\n";
                break;
        }
        return true;
    }
    const std::uint64_t last = token - static_cast<std::uint64_t>(reply_.tokens);
    if (last < epilogue_.size()) {
        out = epilogue_[last];
        return true;
    }
    return false;
}

std::uint64_t WholeBody::size() const noexcept {
    return head.size() + text_length(tokens) + tail.size();
}

std::size_t WholeBody::read(std::uint64_t offset, std::size_t max, std::string& out) const {
    const std::size_t before = out.size();
    const std::uint64_t text_end = head.size() + text_length(tokens);
    if (offset < head.size()) {
        out.append(head, static_cast<std::size_t>(offset), max);
    } else if (offset < text_end) {
        // Whole tokens from the one that holds `offset`: find it by cycles.
        std::uint64_t in_text = offset - head.size();
        const std::uint64_t cycle = text_length(kCycle);
        std::int64_t token = static_cast<std::int64_t>(in_text / cycle) * kCycle;
        in_text %= cycle;
        while (in_text >= word(token).size()) in_text -= word(token++).size();
        out.append(word(token).substr(static_cast<std::size_t>(in_text)));
        for (++token; token < tokens && out.size() - before < max; ++token) out.append(word(token));
    } else if (offset < text_end + tail.size()) {
        out.append(tail, static_cast<std::size_t>(offset - text_end), max);
    }
    return out.size() - before;
}

WholeBody whole_body(Format format, const Reply& r) {
    WholeBody body;
    body.tokens = r.tokens;
    switch (format) {
        case Format::openai: {
            body.head =
                R"({"id":"chatcmpl-mock","object":"chat.completion","created":1700000000,"model":)" +
                json_string(r.model) +
                R"(,"choices":[{"index":0,"message":{"role":"assistant","content":")";
            std::string tail = "\"";
            if (!r.tool_name.empty())
                tail +=
                    R"(,"tool_calls":[{"id":"call_mock_1","type":"function","function":{"name":)" +
                    json_string(r.tool_name) + R"(,"arguments":)" + json_string(kArguments) + "}}]";
            tail += "}";
            body.tail = tail + R"(,"finish_reason":)" +
                        (r.tool_name.empty() ? "\"stop\"" : "\"tool_calls\"") +
                        R"(}],"usage":{"prompt_tokens":)" + std::to_string(r.prompt_tokens) +
                        R"(,"completion_tokens":)" + std::to_string(output_tokens(r)) +
                        R"(,"total_tokens":)" + std::to_string(r.prompt_tokens + output_tokens(r)) +
                        "}}";
            break;
        }
        case Format::anthropic: {
            body.head = R"({"id":"msg_mock","type":"message","role":"assistant","model":)" +
                        json_string(r.model) + R"(,"content":[{"type":"text","text":")";
            std::string tail = "\"}";
            if (!r.tool_name.empty())
                tail += R"(,{"type":"tool_use","id":"toolu_mock_1","name":)" +
                        json_string(r.tool_name) + R"(,"input":)" + kArguments + "}";
            body.tail = tail + "]" + R"(,"stop_reason":)" +
                        (r.tool_name.empty() ? "\"end_turn\"" : "\"tool_use\"") +
                        R"(,"stop_sequence":null,"usage":{"input_tokens":)" +
                        std::to_string(r.prompt_tokens) + R"(,"output_tokens":)" +
                        std::to_string(output_tokens(r)) + "}}";
            break;
        }
        case Format::gemini: {
            body.head = R"({"candidates":[{"content":{"parts":[{"text":")";
            std::string tail = "\"}";
            if (!r.tool_name.empty()) tail += "," + gemini_call_part(r);
            body.tail = tail + "]" + R"(,"role":"model"},"finishReason":"STOP","index":0}],)" +
                        gemini_usage(r) + R"(,"modelVersion":)" + json_string(r.model) + "}";
            break;
        }
    }
    return body;
}

}  // namespace nous::http::mock
