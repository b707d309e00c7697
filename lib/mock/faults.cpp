// The mock's faults in each provider's words. The bodies follow what the
// providers document and send: OpenAI {"error":{"message","type","code"}},
// Anthropic {"type":"error","error":{"type","message"}}, Gemini
// {"error":{"code","message","status","details"}}.

#include "faults.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "nous/http/decoder.hpp"

namespace nous::http::mock {

namespace {

struct FaultName {
    std::string_view name;
    Fault fault;
};

constexpr FaultName kFaults[] = {
    {"rate_limit", Fault::rate_limit},
    {"quota", Fault::quota},
    {"overloaded", Fault::overloaded},
    {"server_error", Fault::server_error},
    {"midstream_error", Fault::midstream_error},
    {"truncate", Fault::truncate},
    {"keepalive_only", Fault::keepalive_only},
    {"slow_first_token", Fault::slow_first_token},
    {"schema_violation", Fault::schema_violation},
    {"refusal", Fault::refusal},
};

MockResponse json_reply(int status, std::string body) {
    MockResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

}  // namespace

bool is_fault_name(const std::string& name) {
    if (name.empty()) return true;
    for (const auto& f : kFaults)
        if (f.name == name) return true;
    return false;
}

std::optional<Fault> requested_fault(const MockRequest& request, const std::string& default_fault,
                                     MockResponse& error) {
    auto value = request.header("x-mock-fault");  // a request's own header wins
    if (!value) value = default_fault;
    if (value->empty()) return Fault::none;
    for (const auto& f : kFaults)
        if (f.name == *value) return f.fault;
    std::string known;
    for (const auto& f : kFaults) known += (known.empty() ? "" : ", ") + std::string(f.name);
    error =
        json_reply(400, openai_error("unknown x-mock-fault " + *value + " (known: " + known + ")",
                                     "invalid_request_error", "unknown_fault"));
    return std::nullopt;
}

std::chrono::milliseconds fault_delay(const MockRequest& request) {
    if (auto value = request.header("x-mock-fault-ms")) {
        long long ms = 0;
        auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), ms);
        if (ec == std::errc() && end == value->data() + value->size() && ms >= 0)
            return std::chrono::milliseconds(ms);
    }
    return std::chrono::milliseconds(1000);
}

namespace {

/// A Go-style duration, as OpenAI writes its resets: "850ms", "37.512s".
std::string go_duration(std::chrono::system_clock::duration d) {
    const long long ms =
        std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    if (ms < 1000) return std::to_string(ms) + "ms";
    char out[32];
    std::snprintf(out, sizeof out, "%lld.%03llds", ms / 1000, ms % 1000);
    return out;
}

/// An RFC 3339 time in UTC, as Anthropic writes its resets.
std::string rfc3339(std::chrono::system_clock::time_point t) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char out[32];
    std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return out;
}

}  // namespace

LimitState exhausted_limits() {
    LimitState s;
    s.requests_remaining = 0;
    s.tokens_remaining = 0;
    s.reset = std::chrono::system_clock::now() + std::chrono::milliseconds(20);
    return s;
}

HeaderList operations_headers(Format format, const std::string& request_id,
                              const LimitState& limits) {
    if (format == Format::anthropic) {
        const std::string reset = rfc3339(limits.reset);
        return {
            {"request-id", request_id},
            {"anthropic-ratelimit-requests-limit", std::to_string(limits.requests_limit)},
            {"anthropic-ratelimit-requests-remaining", std::to_string(limits.requests_remaining)},
            {"anthropic-ratelimit-requests-reset", reset},
            {"anthropic-ratelimit-tokens-limit", std::to_string(limits.tokens_limit)},
            {"anthropic-ratelimit-tokens-remaining", std::to_string(limits.tokens_remaining)},
            {"anthropic-ratelimit-tokens-reset", reset}};
    }
    const std::string reset = go_duration(limits.reset - std::chrono::system_clock::now());
    if (format == Format::bedrock) return {{"x-amzn-RequestId", request_id}};
    return {{"x-request-id", request_id},
            {"x-ratelimit-limit-requests", std::to_string(limits.requests_limit)},
            {"x-ratelimit-remaining-requests", std::to_string(limits.requests_remaining)},
            {"x-ratelimit-reset-requests", reset},
            {"x-ratelimit-limit-tokens", std::to_string(limits.tokens_limit)},
            {"x-ratelimit-remaining-tokens", std::to_string(limits.tokens_remaining)},
            {"x-ratelimit-reset-tokens", reset}};
}

/// Bedrock's error: {"message"} with the exception's name in x-amzn-ErrorType.
MockResponse bedrock_error(int status, const char* type, const char* message) {
    MockResponse r = json_reply(status, mock::bedrock_error(message));
    r.headers.emplace_back("x-amzn-ErrorType", bedrock_error_type(type));
    return r;
}

MockResponse limit_reply(Format format, const std::string& request_id, const LimitState& limits) {
    const auto left = limits.reset - std::chrono::system_clock::now();
    const long long seconds = std::max<long long>(
        1, (std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 999) / 1000);
    const bool anthropic = format == Format::anthropic, gemini = format == Format::gemini;
    MockResponse r =
        format == Format::bedrock
            ? bedrock_error(429, "ThrottlingException",
                            "Too many requests, please wait before trying again.")
            : json_reply(
                  429,
                  anthropic ? anthropic_error(
                                  "rate_limit_error",
                                  "Number of requests has exceeded your per-minute rate limit")
                  : gemini
                      ? gemini_error(
                            429, "Resource has been exhausted (e.g. check quota).",
                            "RESOURCE_EXHAUSTED",
                            R"([{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":")" +
                                std::to_string(seconds) + R"(s"}])")
                      : openai_error("Rate limit reached for requests per minute", "requests",
                                     "rate_limit_exceeded"));
    r.headers.emplace_back("retry-after", std::to_string(seconds));
    const HeaderList operations = operations_headers(format, request_id, limits);
    r.headers.insert(r.headers.end(), operations.begin(), operations.end());
    return r;
}

std::optional<MockResponse> error_reply(Format format, Fault fault) {
    const bool anthropic = format == Format::anthropic, gemini = format == Format::gemini;
    if (format == Format::bedrock) {
        switch (fault) {
            case Fault::rate_limit: {
                MockResponse r =
                    bedrock_error(429, "ThrottlingException",
                                  "Too many requests, please wait before trying again.");
                r.headers.emplace_back("retry-after-ms", "20");
                return r;
            }
            case Fault::quota:
                return bedrock_error(429, "ServiceQuotaExceededException",
                                     "You have exceeded the service quota for this model.");
            case Fault::overloaded:
                return bedrock_error(503, "ServiceUnavailableException",
                                     "The service is unavailable. Try your request again.");
            case Fault::server_error:
                return bedrock_error(500, "InternalServerException",
                                     "The server encountered an internal error.");
            default:
                return std::nullopt;
        }
    }
    switch (fault) {
        case Fault::rate_limit: {
            // A short hint, so that a client's retry comes quickly in tests.
            MockResponse r = json_reply(
                429,
                anthropic ? anthropic_error("rate_limit_error",
                                            "Number of requests has exceeded your rate limit")
                : gemini
                    ? gemini_error(
                          429, "Resource has been exhausted (e.g. check quota).",
                          "RESOURCE_EXHAUSTED",
                          R"([{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.02s"}])")
                    : openai_error("Rate limit reached for requests", "requests",
                                   "rate_limit_exceeded"));
            if (!gemini) r.headers.emplace_back("retry-after-ms", "20");
            return r;
        }
        case Fault::quota:
            return json_reply(
                429,
                anthropic
                    ? anthropic_error("billing_error",
                                      "Your credit balance is too low to access the Anthropic API")
                : gemini
                    ? gemini_error(
                          429, "You exceeded your current quota, please check your plan.",
                          "RESOURCE_EXHAUSTED",
                          R"([{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}])")
                    : openai_error("You exceeded your current quota, please check your plan and "
                                   "billing details.",
                                   "insufficient_quota", "insufficient_quota"));
        case Fault::overloaded:
            return anthropic ? json_reply(529, anthropic_error("overloaded_error", "Overloaded"))
                   : gemini  ? json_reply(503, gemini_error(503,
                                                            "The model is overloaded. Please try "
                                                             "again later.",
                                                            "UNAVAILABLE"))
                             : json_reply(503, openai_error("The server is overloaded or not "
                                                             "ready yet.",
                                                            "server_error", "overloaded"));
        case Fault::server_error:
            return anthropic
                       ? json_reply(500, anthropic_error("api_error", "Internal server error"))
                   : gemini
                       ? json_reply(
                             500, gemini_error(500, "An internal error has occurred.", "INTERNAL"))
                       : json_reply(500, openai_error("The server had an error while processing "
                                                      "your request.",
                                                      "server_error", "server_error"));
        default:
            return std::nullopt;
    }
}

std::string midstream_error_event(Format format) {
    switch (format) {
        case Format::anthropic:
            return "event: error\ndata: " + anthropic_error("overloaded_error", "Overloaded") +
                   "\n\n";
        case Format::gemini:
            return "data: " +
                   gemini_error(500, "An internal error has occurred mid-stream.", "INTERNAL") +
                   "\n\n";
        case Format::responses:
            return "event: error\ndata: "
                   R"({"type":"error","code":"server_error","message":"The server had an error while processing your request.","param":null,"sequence_number":99})"
                   "\n\n";
        case Format::bedrock:
            return encode_aws_event_stream_message(
                {{":exception-type", "modelStreamErrorException"},
                 {":content-type", "application/json"},
                 {":message-type", "exception"}},
                R"({"message":"The model stream ended with an error mid-stream."})");
        case Format::openai:
            break;
    }
    return "data: " +
           openai_error("The server had an error while processing your request.", "server_error",
                        "server_error") +
           "\n\n";
}

std::string_view keepalive_event(Format format) {
    if (format == Format::bedrock) return {};  // the AWS event stream has none
    return format == Format::anthropic ? "event: ping\ndata: {\"type\":\"ping\"}\n\n"
                                       : ": keep-alive\n\n";
}

}  // namespace nous::http::mock
