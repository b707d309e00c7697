// What the Messages API refuses of a request beyond the shared checks
// (formats/anthropic/request_checks.hpp).

#include "formats/anthropic/request_checks.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "formats/request_json.hpp"
#include "json/ascii.hpp"

namespace nous::llm::detail {

namespace {

/// The anthropic-version sent when the request names none.
constexpr const char* kDefaultVersion = "2023-06-01";
/// The first version whose request type has no temperature or top_p.
constexpr std::string_view kSamplingGone = "2026-10-21";

/// What Anthropic counts as whitespace.
constexpr std::string_view kWhitespace = " \t\n\r";

/// Text that is whitespace alone (and not empty: an empty text is no block).
bool blank(std::string_view text) {
    return !text.empty() && text.find_first_not_of(kWhitespace) == std::string_view::npos;
}

}  // namespace

std::string_view anthropic_version_of(const ChatRequest& request) {
    return request.anthropic_version.empty() ? std::string_view(kDefaultVersion)
                                             : std::string_view(request.anthropic_version);
}

std::optional<Error> version_check(const ChatRequest& request, const WireFormat& format) {
    const std::string_view v = anthropic_version_of(request);
    const bool date =
        v.size() == 10 && v[4] == '-' && v[7] == '-' &&
        std::all_of(v.begin(), v.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
    if (!date)
        return Error(nous::http::ErrorCode::invalid_argument,
                     "anthropic_version must be a date, YYYY-MM-DD (such as " +
                         std::string(kDefaultVersion) + "), not '" + std::string(v) + "'");
    if (v >= kSamplingGone) {
        const std::string why = " (anthropic-version " + std::string(v) + ")";
        if (request.temperature) return unsupported("temperature" + why, format);
        if (request.top_p) return unsupported("top_p" + why, format);
    }
    return std::nullopt;
}

std::optional<Error> whitespace_check(const ChatRequest& r, const WireFormat& format) {
    auto refused = [&](std::size_t at, const char* what) {
        return Error(nous::http::ErrorCode::invalid_argument,
                     "message " + std::to_string(at) + ": " + std::string(format.name()) +
                         " takes no " + what + " (refused before sending)");
    };
    // The system messages are one prompt, joined: Anthropic refuses it when
    // it is whitespace alone ("system: text content blocks must contain
    // non-whitespace text").
    if (blank(joined_system(r)))
        return Error(nous::http::ErrorCode::invalid_argument,
                     "the system prompt: " + std::string(format.name()) +
                         " takes no text of whitespace alone (refused before sending)");
    // "stop_sequences: each stop sequence must contain non-whitespace": a
    // newline, OpenAI's usual stop, is refused here, not sent.
    for (std::size_t i = 0; i < r.stop.size(); ++i)
        if (blank(r.stop[i]))
            return Error(
                nous::http::ErrorCode::invalid_argument,
                "stop sequence " + std::to_string(i) + ": " + std::string(format.name()) +
                    " takes no stop sequence of whitespace alone (refused before sending)");
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
        const ChatMessage& m = r.messages[i];
        if (m.role == "system" || m.role == "tool") continue;
        bool whitespace_alone = blank(m.content);
        for (const ContentPart& part : m.parts)
            whitespace_alone =
                whitespace_alone || (part.kind == ContentPart::Kind::text && blank(part.text));
        if (whitespace_alone) return refused(i, "text of whitespace alone");
    }
    if (r.messages.empty() || r.messages.back().role != "assistant") return std::nullopt;
    const ChatMessage& last = r.messages.back();
    if (!last.tool_calls.empty()) return std::nullopt;  // its last block is a tool call
    std::string_view text = last.content;               // the turn's last text block
    for (const ContentPart& part : last.parts)
        if (part.kind == ContentPart::Kind::text && !part.text.empty()) text = part.text;
    if (!text.empty() && kWhitespace.find(text.back()) != std::string_view::npos)
        return refused(r.messages.size() - 1,
                       "final assistant turn (a prefill) whose text ends in whitespace");
    return std::nullopt;
}

std::optional<Error> thinking_check(const ChatRequest& r, const WireFormat& format) {
    if (!r.reasoning_effort) return std::nullopt;
    auto refused = [&](const std::string& what, const char* takes) {
        return Error(nous::http::ErrorCode::invalid_argument,
                     what + " is not taken by " + std::string(format.name()) +
                         " with reasoning on: thinking takes " + takes +
                         " (refused before sending)");
    };
    auto text = [](double v) {
        std::ostringstream out;
        out << v;
        return out.str();
    };
    if (r.temperature && *r.temperature != 1.0)
        return refused("temperature " + text(*r.temperature), "1 only");
    if (r.top_p && *r.top_p < 0.95) return refused("top_p " + text(*r.top_p), "0.95 to 1");
    if (r.tool_choice && (r.tool_choice->mode == ToolChoice::Mode::required ||
                          r.tool_choice->mode == ToolChoice::Mode::named))
        return refused("a tool_choice that forces a call", "auto or none");
    return std::nullopt;
}

std::optional<Error> image_type_check(const ChatRequest& request, const WireFormat& format) {
    for (const ChatMessage& m : request.messages)
        for (const ContentPart& part : m.parts)
            if (part.kind == ContentPart::Kind::image && part.image_url.empty() &&
                part.media_type != "image/jpeg" && part.media_type != "image/png" &&
                part.media_type != "image/gif" && part.media_type != "image/webp")
                return unsupported("an image of type " +
                                       quoted_if_printable(part.media_type, "(unprintable)") +
                                       " (png, jpeg, gif and webp are taken)",
                                   format);
    return std::nullopt;
}

}  // namespace nous::llm::detail
