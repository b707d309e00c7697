// Rate-limit headers (OpenAI, Anthropic, retry-after) into one RateLimit.

#include "nous/llm/rate_limit.hpp"

#include <charconv>
#include <cmath>
#include <ctime>
#include <string>

#include "nous/http/client.hpp"

namespace nous::llm {

namespace {

std::optional<std::string_view> header(const nous::http::Headers& headers, std::string_view name) {
    for (const auto& [k, v] : headers)
        if (nous::http::header_name_equals(k, name)) return std::string_view(v);
    return std::nullopt;
}

std::optional<std::int64_t> integer(std::optional<std::string_view> text) {
    if (!text) return std::nullopt;
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < 0) return std::nullopt;
    return value;
}

/// A non-negative decimal number ("3", "3.5") at the front of `text`, consumed.
std::optional<double> number(std::string_view& text) {
    std::size_t i = 0;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + i, value);
    if (ec != std::errc() || end != text.data() + i || !std::isfinite(value)) return std::nullopt;
    text.remove_prefix(i);
    return value;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
    if (text.empty() || text.size() > 64) return std::nullopt;
    if (text == "0") return std::chrono::milliseconds(0);
    double total_ms = 0;
    while (!text.empty()) {
        auto value = number(text);
        if (!value) return std::nullopt;
        double unit_ms;
        if (text.rfind("ms", 0) == 0) {
            unit_ms = 1, text.remove_prefix(2);
        } else if (text.rfind("us", 0) == 0) {
            unit_ms = 1e-3, text.remove_prefix(2);
        } else if (text.rfind("\xC2\xB5s", 0) == 0) {  // µs
            unit_ms = 1e-3, text.remove_prefix(3);
        } else if (text.rfind("ns", 0) == 0) {
            unit_ms = 1e-6, text.remove_prefix(2);
        } else if (!text.empty() && text[0] == 'h') {
            unit_ms = 3'600'000, text.remove_prefix(1);
        } else if (!text.empty() && text[0] == 'm') {
            unit_ms = 60'000, text.remove_prefix(1);
        } else if (!text.empty() && text[0] == 's') {
            unit_ms = 1000, text.remove_prefix(1);
        } else {
            return std::nullopt;
        }
        total_ms += *value * unit_ms;
        if (total_ms > 1e12) return std::nullopt;  // ~31 years: not a reset
    }
    return std::chrono::milliseconds(static_cast<long long>(std::llround(total_ms)));
}

std::optional<RateLimit::Time> parse_rfc3339(std::string_view t) {
    // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
    auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
        if (at + n > t.size()) return std::nullopt;
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (t[i] < '0' || t[i] > '9') return std::nullopt;
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2), hour = digits(11, 2),
         minute = digits(14, 2), second = digits(17, 2);
    if (!year || !month || !day || !hour || !minute || !second || t.size() < 20 || t[4] != '-' ||
        t[7] != '-' || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || t[13] != ':' ||
        t[16] != ':')
        return std::nullopt;
    if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
        *second > 60)
        return std::nullopt;
    // system_clock counts nanoseconds in 64 bits (about 1678..2262): a year
    // outside a reset's plausible range would overflow it (found by fuzz_rate_limit).
    if (*year < 1970 || *year > 2200) return std::nullopt;
    std::size_t at = 19;
    double fraction = 0;
    if (at < t.size() && t[at] == '.') {
        std::size_t start = ++at;
        double scale = 0.1;
        while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
            fraction += (t[at] - '0') * scale;
            scale /= 10;
            ++at;
        }
        if (at == start) return std::nullopt;
    }
    long offset_s = 0;
    if (at < t.size() && (t[at] == 'Z' || t[at] == 'z')) {
        ++at;
    } else if (at < t.size() && (t[at] == '+' || t[at] == '-')) {
        auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
        if (!oh || !om || at + 3 >= t.size() || t[at + 3] != ':') return std::nullopt;
        offset_s = (t[at] == '+' ? 1 : -1) * (*oh * 3600L + *om * 60L);
        at += 6;
    } else {
        return std::nullopt;
    }
    if (at != t.size()) return std::nullopt;
    std::tm tm{};
    tm.tm_year = *year - 1900;
    tm.tm_mon = *month - 1;
    tm.tm_mday = *day;
    tm.tm_hour = *hour;
    tm.tm_min = *minute;
    tm.tm_sec = *second;
    const std::time_t utc = ::timegm(&tm) - offset_s;
    return std::chrono::system_clock::from_time_t(utc) +
           std::chrono::milliseconds(static_cast<long long>(std::llround(fraction * 1000)));
}

std::optional<RateLimit> parse_rate_limit(const nous::http::Headers& headers, RateLimit::Time now) {
    RateLimit r;
    r.received_at = now;
    bool any = false;
    auto duration_reset = [&](std::string_view name, std::optional<RateLimit::Time>& out) {
        if (auto text = header(headers, name))
            if (auto d = parse_go_duration(*text)) out = now + *d;
    };
    auto time_reset = [&](std::string_view name, std::optional<RateLimit::Time>& out) {
        if (auto text = header(headers, name))
            if (auto when = parse_rfc3339(*text)) out = *when;
    };
    // OpenAI (and the servers that copy it).
    r.requests_limit = integer(header(headers, "x-ratelimit-limit-requests"));
    r.requests_remaining = integer(header(headers, "x-ratelimit-remaining-requests"));
    duration_reset("x-ratelimit-reset-requests", r.requests_reset);
    r.tokens_limit = integer(header(headers, "x-ratelimit-limit-tokens"));
    r.tokens_remaining = integer(header(headers, "x-ratelimit-remaining-tokens"));
    duration_reset("x-ratelimit-reset-tokens", r.tokens_reset);
    // Anthropic: combined tokens, else input tokens.
    if (!r.requests_limit)
        r.requests_limit = integer(header(headers, "anthropic-ratelimit-requests-limit"));
    if (!r.requests_remaining)
        r.requests_remaining = integer(header(headers, "anthropic-ratelimit-requests-remaining"));
    if (!r.requests_reset) time_reset("anthropic-ratelimit-requests-reset", r.requests_reset);
    for (const char* kind : {"tokens", "input-tokens"}) {
        const std::string prefix = std::string("anthropic-ratelimit-") + kind + "-";
        if (!r.tokens_limit) r.tokens_limit = integer(header(headers, prefix + "limit"));
        if (!r.tokens_remaining)
            r.tokens_remaining = integer(header(headers, prefix + "remaining"));
        if (!r.tokens_reset) time_reset(prefix + "reset", r.tokens_reset);
    }
    // Seconds; a value past ~31 years is not a hint (and would overflow: fuzz_rate_limit).
    if (auto retry = integer(header(headers, "retry-after")); retry && *retry <= 1'000'000'000)
        r.retry_after = std::chrono::milliseconds(*retry * 1000);
    any = r.requests_limit || r.requests_remaining || r.requests_reset || r.tokens_limit ||
          r.tokens_remaining || r.tokens_reset || r.retry_after;
    if (!any) return std::nullopt;
    return r;
}

}  // namespace nous::llm
