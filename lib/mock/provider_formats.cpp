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

// The reasoning a reply carries when asked, its pieces, and its signature.
const char* const kReasoning = "Thinking about the answer.";
const char* const kReasoningPieces[] = {"Thinking", " about", " the", " answer."};
const char* const kSignature = "mock-signature-1";

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

/// Anthropic's content blocks: thinking (when asked) first, then text, then the tool call.
int anthropic_text_index(const Reply& r) { return r.reasoning ? 1 : 0; }

void anthropic_events(const Reply& r, std::vector<std::string>& before,
                      std::vector<std::string>& after) {
    before.push_back(sse(
        R"({"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":)" +
            json_string(r.model) +
            R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":)" +
            std::to_string(r.prompt_tokens) + R"(,"output_tokens":1}}})",
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

std::string all_text(std::int64_t tokens) {
    std::string text;
    for (std::int64_t i = 0; i < tokens; ++i) text += word(i);
    return text;
}

/// `with_text` false: the text left empty (a whole body's generator fills it in).
std::string responses_message_item(const Reply& r, bool done, bool with_text = true) {
    std::string content;
    if (done)
        content =
            R"({"type":"output_text","text":)" +
            json_string(with_text && r.tokens <= kCompletedTextTokens ? all_text(r.tokens) : "") +
            R"(,"annotations":[]})";
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
                       R"(,"input_tokens_details":{"cached_tokens":0},"output_tokens":)" +
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

}  // namespace

std::string_view word(std::int64_t i) noexcept { return kWords[i % kCycle]; }

EventStream::EventStream(Format format, Reply reply) : format_(format), reply_(std::move(reply)) {
    switch (format_) {
        case Format::openai:
            token_head_ = openai_chunk_head(reply_);
            openai_events(reply_, prologue_, epilogue_);
            break;
        case Format::anthropic:
            token_head_ = R"({"type":"content_block_delta","index":)" +
                          std::to_string(anthropic_text_index(reply_)) +
                          R"(,"delta":{"type":"text_delta","text":)";
            anthropic_events(reply_, prologue_, epilogue_);
            break;
        case Format::gemini:
            token_head_ = R"({"candidates":[{"content":{"parts":[{"text":)";
            gemini_events(reply_, prologue_, epilogue_);
            break;
        case Format::responses:
            token_head_ = responses_text_head(reply_);
            responses_events(reply_, prologue_, epilogue_);
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
            case Format::responses:
                out = "event: response.output_text.delta\ndata: " + token_head_ +
                      std::to_string(at) + R"(,"delta":)" + text + "}\n\n";
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
                json_string(r.model) + R"(,"choices":[{"index":0,"message":{"role":"assistant",)" +
                (r.reasoning ? R"("reasoning_content":)" + json_string(kReasoning) + ","
                             : std::string()) +
                R"("content":")";
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
            body.head =
                R"({"id":"msg_mock","type":"message","role":"assistant","model":)" +
                json_string(r.model) + R"(,"content":[)" +
                (r.reasoning ? R"({"type":"thinking","thinking":)" + json_string(kReasoning) +
                                   R"(,"signature":)" + json_string(kSignature) + "},"
                             : std::string()) +
                R"({"type":"text","text":")";
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
            body.head = R"({"candidates":[{"content":{"parts":[)" +
                        (r.reasoning ? gemini_thought_part() + "," : std::string()) +
                        R"({"text":")";
            std::string tail = "\"" + (r.tool_name.empty() ? gemini_signature(r) : "") + "}";
            if (!r.tool_name.empty()) tail += "," + gemini_call_part(r);
            body.tail = tail + "]" + R"(,"role":"model"},"finishReason":"STOP","index":0}],)" +
                        gemini_usage(r) + R"(,"modelVersion":)" + json_string(r.model) + "}";
            break;
        }
        case Format::responses: {
            // The whole response with the message's text left open for the tokens.
            const std::string whole = responses_object(r, true, /*with_text=*/false);
            const std::string empty_text = R"("type":"output_text","text":")";
            const auto at = whole.find(empty_text) + empty_text.size();
            body.head = whole.substr(0, at);
            body.tail = whole.substr(at);
            break;
        }
    }
    return body;
}

}  // namespace nous::http::mock
