// Header helpers: name comparison, validation, redaction for logs and -v.

#include "core/headers.hpp"

#include "core/strings.hpp"
#include "nous/http/client.hpp"

namespace nous::http {

bool header_name_equals(std::string_view a, std::string_view b) noexcept {
    return detail::ascii_iequals(a, b);
}

std::optional<std::string_view> Response::header(std::string_view name) const {
    return detail::find_header(headers, name);
}

std::string request_id_of(const Headers& headers) {
    // In the order providers use them: most send x-request-id; Anthropic
    // request-id; OpenRouter x-generation-id; AWS x-amzn-RequestId.
    for (const char* name : {"x-request-id", "request-id", "x-generation-id", "x-amzn-requestid"})
        for (const auto& [k, v] : headers)
            if (header_name_equals(k, name)) return detail::printable_ascii(v);
    return {};
}

void add_bearer_auth(Headers& headers, std::string_view api_key) {
    if (!api_key.empty()) headers.emplace_back("authorization", "Bearer " + std::string(api_key));
}
void add_api_key(Headers& headers, std::string_view header_name, std::string_view api_key) {
    if (!api_key.empty() && !header_name.empty())
        headers.emplace_back(std::string(header_name), std::string(api_key));
}
void add_openai_organization(Headers& headers, std::string_view organization) {
    if (!organization.empty())
        headers.emplace_back("openai-organization", std::string(organization));
}
void add_openai_project(Headers& headers, std::string_view project) {
    if (!project.empty()) headers.emplace_back("openai-project", std::string(project));
}

namespace detail {

std::optional<Error> validate_request_headers(std::string_view body, const Headers& headers) {
    if (auto e = validate_headers(headers)) return e;
    for (const auto& [name, value] : headers) {
        if (header_name_equals(name, "transfer-encoding"))
            return Error(ErrorCode::invalid_argument,
                         "Transfer-Encoding is set by the library, not the caller");
        if (header_name_equals(name, "content-length") &&
            trim(value) != std::to_string(body.size()))
            return Error(ErrorCode::invalid_argument,
                         "Content-Length header disagrees with the body size (" +
                             std::to_string(body.size()) + ")");
    }
    return std::nullopt;
}

bool is_secret_header(std::string_view name) noexcept {
    for (std::string_view secret : {"authorization", "proxy-authorization", "cookie", "x-api-key",
                                    "api-key", "x-goog-api-key"})
        if (header_name_equals(name, secret)) return true;
    return false;
}

std::string redacted_header_line(std::string_view name, std::string_view value) {
    std::string line(name);
    line += ": ";
    line += is_secret_header(name) ? std::string_view("[REDACTED]") : value;
    return line;
}

std::optional<std::string_view> find_header(const Headers& headers, std::string_view name) {
    for (const auto& [k, v] : headers)
        if (header_name_equals(k, name)) return std::string_view(v);
    return std::nullopt;
}

std::string header_names_for_log(const Headers& headers) {
    std::string out = "[";
    for (std::size_t i = 0; i < headers.size(); ++i) {
        if (i) out += ", ";
        // The name itself may be the injection: show only its printable part.
        out += printable_ascii(headers[i].first);
        out += ": [REDACTED]";
    }
    return out + "]";
}

}  // namespace detail
}  // namespace nous::http

namespace nous::http {

std::optional<Error> validate_headers(const Headers& headers) {
    for (std::size_t i = 0; i < headers.size(); ++i) {
        const auto& [name, value] = headers[i];
        auto where = [&] { return "header #" + std::to_string(i + 1); };
        if (name.empty()) return Error(ErrorCode::invalid_argument, where() + " has an empty name");
        for (char c : name) {
            if (c == '\r' || c == '\n' || c == '\0')
                return Error(ErrorCode::invalid_argument,
                             where() + ": name contains CR, LF or NUL (header injection refused)");
            if (!detail::is_token_char(static_cast<unsigned char>(c)))
                return Error(ErrorCode::invalid_argument,
                             where() + ": name '" + name + "' is not a valid HTTP token");
        }
        for (char c : value)
            if (c == '\r' || c == '\n' || c == '\0')
                return Error(ErrorCode::invalid_argument,
                             "header '" + name +
                                 "': value contains CR, LF or NUL (header injection refused)");
    }
    return std::nullopt;
}

std::string redact_header(std::string_view name, std::string_view value) {
    return detail::redacted_header_line(name, value);
}

}  // namespace nous::http
