// The mock's replies, generated as they are sent: the generic stream and
// whole-body machinery; each provider's events and bodies are its
// ReplyFormat's (replies/*.cpp).

#include "provider_formats.hpp"

#include <array>

#include "nous/llm/partial_json.hpp"
#include "replies/reply_format.hpp"

namespace nous::http::mock {

const ReplyFormat& openai_reply() noexcept;
const ReplyFormat& anthropic_reply() noexcept;
const ReplyFormat& gemini_reply() noexcept;
const ReplyFormat& responses_reply() noexcept;
const ReplyFormat& bedrock_reply() noexcept;

const ReplyFormat& reply_format(Format format) noexcept {
    // In the order of Format's enumerators.
    static const std::array<const ReplyFormat*, 5> all = {
        &openai_reply(), &anthropic_reply(), &gemini_reply(), &responses_reply(), &bedrock_reply()};
    return *all[static_cast<std::size_t>(format)];
}

std::string json_string(std::string_view text) {
    // The library's own writer (a public JsonValue's), so that the mock and
    // the library escape alike.
    nous::llm::JsonValue value;
    value.type = nous::llm::JsonValue::Type::string;
    value.string = text;
    return value.to_json();
}

std::string openai_error(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param) {
    return R"({"error":{"message":)" + json_string(message) + R"(,"type":)" + json_string(type) +
           R"(,"param":)" + (param.empty() ? std::string("null") : json_string(param)) +
           R"(,"code":)" + (code.empty() ? std::string("null") : json_string(code)) + "}}";
}

std::string anthropic_error(std::string_view type, std::string_view message) {
    return R"({"type":"error","error":{"type":)" + json_string(type) + R"(,"message":)" +
           json_string(message) + "}}";
}

std::string gemini_error(int code, std::string_view message, std::string_view status,
                         std::string_view details) {
    return R"({"error":{"code":)" + std::to_string(code) + R"(,"message":)" + json_string(message) +
           R"(,"status":)" + json_string(status) +
           (details.empty() ? std::string() : ",\"details\":" + std::string(details)) + "}}";
}

std::string bedrock_error(std::string_view message) {
    return R"({"message":)" + json_string(message) + "}";
}

std::string bedrock_error_type(std::string_view exception) {
    return std::string(exception) + ":http://internal.amazon.com/coral/com.amazon.bedrock/";
}

namespace {

const char* const kWords[] = {"Hello",   " from", " the",       " nous",   "-http", " mock",
                              " server", ".",     " Tokens",    " arrive", " one",  " by",
                              " one",    " as",   " requested", "!"};

}  // namespace

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

std::string_view word(std::int64_t i) noexcept { return kWords[i % kCycle]; }

void set_text(Reply& reply, std::string text) {
    reply.pieced = true;
    reply.tokens = static_cast<std::int64_t>((text.size() + kPieceBytes - 1) / kPieceBytes);
    reply.text = std::move(text);
}

std::string_view token_text(const Reply& reply, std::int64_t i) noexcept {
    if (!reply.pieced) return word(i);
    return std::string_view(reply.text)
        .substr(static_cast<std::size_t>(i) * kPieceBytes, kPieceBytes);
}

std::string all_text(const Reply& reply) {
    if (reply.pieced) return reply.text;
    std::string text;
    for (std::int64_t i = 0; i < reply.tokens; ++i) text += token_text(reply, i);
    return text;
}

EventStream::EventStream(Format format, Reply reply) : format_(format), reply_(std::move(reply)) {
    reply_format(format_).stream_frame(reply_, token_head_, prologue_, epilogue_);
}

bool EventStream::next(std::string& out) {
    const std::size_t at = position_++;
    if (at < prologue_.size()) {
        out = prologue_[at];
        return true;
    }
    const std::uint64_t token = at - prologue_.size();
    if (token < static_cast<std::uint64_t>(reply_.tokens)) {
        const std::string text = json_string(token_text(reply_, static_cast<std::int64_t>(token)));
        out.clear();
        reply_format(format_).token_event(reply_, token_head_, at, token, text, out);
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
    reply_format(format).whole(r, body);
    if (r.pieced) {
        // Pieces are any text: written escaped, inside the head.
        const std::string escaped = json_string(all_text(r));
        body.head += escaped.substr(1, escaped.size() - 2);
        body.tokens = 0;
    }
    return body;
}

}  // namespace nous::http::mock
