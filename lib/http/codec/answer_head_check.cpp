// The checks of a 2xx answer's head before its body is read as the answer.

#include "codec/answer_head_check.hpp"

#include "core/headers.hpp"
#include "core/strings.hpp"

namespace nous::http::detail {

namespace {

/// A server's header value as a message may quote it: printable ASCII, at
/// most 60 bytes (it is the peer's text, bound for a log line).
std::string quoted(std::string_view value) {
    return "'" + printable_ascii(value.substr(0, 60)) + (value.size() > 60 ? "...'" : "'");
}

/// Every coding in a Content-Encoding list is identity (or the list is empty).
bool identity_only(std::string_view list) {
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view coding = trim(list.substr(0, comma));
        if (!coding.empty() && !ascii_iequals(coding, "identity")) return false;
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    }
    return true;
}

/// The media type without its parameters, trimmed.
std::string_view media_type(std::string_view content_type) {
    return trim(content_type.substr(0, content_type.find(';')));
}

bool ends_with_ignoring_case(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && ascii_iequals(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

std::optional<Error> unasked_content_coding(const Headers& answer, const Headers& request) {
    const auto coding = find_header(answer, "content-encoding");
    if (!coding || identity_only(*coding) || find_header(request, "accept-encoding"))
        return std::nullopt;
    return Error(ErrorCode::protocol,
                 "the answer's body is encoded (Content-Encoding: " + quoted(*coding) +
                     "), which the request did not ask for and this client does not decode");
}

std::optional<Error> whole_json_for_stream(const Headers& answer) {
    const auto type = find_header(answer, "content-type");
    if (!type) return std::nullopt;
    const std::string_view media = media_type(*type);
    if (!ascii_iequals(media, "application/json") && !ends_with_ignoring_case(media, "+json"))
        return std::nullopt;
    return Error(ErrorCode::protocol, "an event stream was asked for, and the server answered " +
                                          quoted(media) +
                                          ": it did not stream (its answer is the error's body)");
}

Error with_answer(Error e, int status, Headers headers, std::string body) {
    e.status = status;
    e.request_id = request_id_of(headers);
    e.headers = std::move(headers);
    e.body = std::move(body);
    return e;
}

}  // namespace nous::http::detail
