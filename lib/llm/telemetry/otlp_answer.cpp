// A collector's partial success, read from its 200 answer.

#include "telemetry/otlp_answer.hpp"

#include <charconv>

#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

const Value* either(const Value& v, const char* camel, const char* snake) {
    const Value* m = member(v, camel);
    return m ? m : member(v, snake);
}

std::int64_t count_of(const Value* v) {
    if (!v) return 0;
    if (v->IsInt64()) return v->GetInt64();
    std::int64_t n = 0;
    if (v->IsString()) {
        const char* text = v->GetString();
        const auto [end, ec] = std::from_chars(text, text + v->GetStringLength(), n);
        if (ec != std::errc() || end != text + v->GetStringLength()) return 0;
    }
    return n;
}

}  // namespace

OtlpRejection rejection_of(std::string_view body, const char* count_camel,
                           const char* count_snake) {
    OtlpRejection out;
    if (body.empty()) return out;
    auto doc = nous::http::parse_json(body);
    if (!doc) return out;
    const Value* partial = either(*doc.value(), "partialSuccess", "partial_success");
    if (!partial) return out;
    out.rejected = count_of(either(*partial, count_camel, count_snake));
    if (out.rejected < 0) out.rejected = 0;
    const Value* message = either(*partial, "errorMessage", "error_message");
    if (message && message->IsString()) {
        const std::string_view text(message->GetString(), message->GetStringLength());
        for (std::size_t i = 0; i < text.size() && i < 200; ++i)
            out.why += text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    }
    return out;
}

}  // namespace nous::llm::detail
