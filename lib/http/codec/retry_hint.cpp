// Retry hints of an error response: retry-after-ms, Retry-After (seconds or
// an HTTP-date in any of RFC 9110's three forms), Google RetryInfo.

#include "codec/retry_hint.hpp"

#include <rapidjson/document.h>

#include <charconv>
#include <cmath>
#include <ctime>

#include "core/json_limits.hpp"
#include "core/strings.hpp"
#include "nous/http/client.hpp"

namespace nous::http::detail {

namespace {

std::optional<Milliseconds> parse_seconds(std::string_view text) {
    double seconds = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || p != text.data() + text.size() || !(seconds >= 0) || seconds > 1e9)
        return std::nullopt;
    return Milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) noexcept {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

/// A small cursor over the date text; every form is fixed ASCII.
struct DateCursor {
    std::string_view text;
    bool literal(std::string_view s) {
        if (text.substr(0, s.size()) != s) return false;
        text.remove_prefix(s.size());
        return true;
    }
    bool number(std::size_t min_digits, std::size_t max_digits, int& out) {
        std::size_t n = 0;
        out = 0;
        while (n < max_digits && n < text.size() && text[n] >= '0' && text[n] <= '9')
            out = out * 10 + (text[n++] - '0');
        if (n < min_digits) return false;
        text.remove_prefix(n);
        return true;
    }
    bool month(int& out) {
        static constexpr std::string_view names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        for (int i = 0; i < 12; ++i)
            if (literal(names[i])) {
                out = i + 1;
                return true;
            }
        return false;
    }
    bool weekday(bool long_form) {
        static constexpr std::string_view shorts[] = {"Mon", "Tue", "Wed", "Thu",
                                                      "Fri", "Sat", "Sun"};
        static constexpr std::string_view longs[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                     "Friday", "Saturday", "Sunday"};
        for (int i = 0; i < 7; ++i)
            if (literal(long_form ? longs[i] : shorts[i])) return true;
        return false;
    }
    bool clock(int& h, int& m, int& s) {
        return number(2, 2, h) && literal(":") && number(2, 2, m) && literal(":") &&
               number(2, 2, s);
    }
};

}  // namespace

std::optional<long long> parse_http_date(std::string_view text) {
    int day = 0, month = 0, year = 0, h = 0, m = 0, s = 0;
    bool parsed = false;
    {  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        DateCursor c{text};
        parsed = c.weekday(false) && c.literal(", ") && c.number(2, 2, day) && c.literal(" ") &&
                 c.month(month) && c.literal(" ") && c.number(4, 4, year) && c.literal(" ") &&
                 c.clock(h, m, s) && c.literal(" GMT") && c.text.empty();
    }
    if (!parsed) {  // obsolete RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        DateCursor c{text};
        parsed = c.weekday(true) && c.literal(", ") && c.number(2, 2, day) && c.literal("-") &&
                 c.month(month) && c.literal("-") && c.number(2, 2, year) && c.literal(" ") &&
                 c.clock(h, m, s) && c.literal(" GMT") && c.text.empty();
        if (parsed) {
            // RFC 9110 5.6.7: a two-digit year more than 50 years ahead is in the past century.
            const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
            std::tm utc{};
            gmtime_r(&now, &utc);
            const int this_year = utc.tm_year + 1900;
            year += this_year / 100 * 100;
            if (year > this_year + 50) year -= 100;
        }
    }
    if (!parsed) {  // asctime: Sun Nov  6 08:49:37 1994
        DateCursor c{text};
        parsed = c.weekday(false) && c.literal(" ") && c.month(month) && c.literal(" ") &&
                 (c.literal(" ") ? c.number(1, 1, day) : c.number(2, 2, day)) && c.literal(" ") &&
                 c.clock(h, m, s) && c.literal(" ") && c.number(4, 4, year) && c.text.empty();
    }
    if (!parsed || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return std::nullopt;
    return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) *
               86400LL +
           h * 3600LL + m * 60LL + s;
}

namespace {

std::optional<Milliseconds> delay_until_http_date(std::string_view text) {
    auto when = parse_http_date(text);
    if (!when) return std::nullopt;
    const auto now = std::chrono::duration_cast<Milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    const auto delta = Milliseconds(*when * 1000) - now;
    return delta.count() < 0 ? Milliseconds(0) : delta;
}

std::string_view text_member(const rapidjson::Value& v, const char* key) {
    if (!v.IsObject()) return {};
    auto m = v.FindMember(key);
    return m != v.MemberEnd() && m->value.IsString()
               ? std::string_view(m->value.GetString(), m->value.GetStringLength())
               : std::string_view();
}

/// Google RetryInfo.retryDelay ("42s") in an error object's details.
std::optional<Milliseconds> retry_info_delay(const rapidjson::Value& error) {
    if (!error.IsObject()) return std::nullopt;
    auto details = error.FindMember("details");
    if (details == error.MemberEnd() || !details->value.IsArray()) return std::nullopt;
    for (const auto& d : details->value.GetArray()) {
        std::string_view text = text_member(d, "retryDelay");
        if (text.empty() || text.back() != 's') continue;
        if (auto ms = parse_seconds(text.substr(0, text.size() - 1))) return ms;
    }
    return std::nullopt;
}

/// Whether an error object says the quota is exhausted (Error::quota_exhausted).
bool error_says_quota(const rapidjson::Value& error) {
    if (!error.IsObject()) return false;
    // OpenAI (and compatible servers): the type or code names it.
    if (text_member(error, "code") == "insufficient_quota" ||
        text_member(error, "type") == "insufficient_quota")
        return true;
    // Anthropic: the account's credit or billing, not the rate.
    if (text_member(error, "type") == "billing_error") return true;
    // Gemini: RESOURCE_EXHAUSTED is also the per-minute limit; only a
    // QuotaFailure that names a per-day quota is exhaustion.
    if (text_member(error, "status") != "RESOURCE_EXHAUSTED") return false;
    auto details = error.FindMember("details");
    if (details == error.MemberEnd() || !details->value.IsArray()) return false;
    for (const auto& d : details->value.GetArray()) {
        if (text_member(d, "@type").find("QuotaFailure") == std::string_view::npos) continue;
        auto violations = d.FindMember("violations");
        if (violations == d.MemberEnd() || !violations->value.IsArray()) continue;
        for (const auto& v : violations->value.GetArray())
            if (text_member(v, "quotaId").find("PerDay") != std::string_view::npos ||
                text_member(v, "quotaMetric").find("per_day") != std::string_view::npos)
                return true;
    }
    return false;
}

/// What an error body says, from one depth-limited parse: `{"error":{...}}`,
/// or an array of them (Gemini sometimes wraps errors in one). A body that is
/// not JSON, nests too deep or is over 1 MiB says nothing.
struct ErrorBodyFacts {
    std::optional<Milliseconds> retry_delay;  ///< the first RetryInfo
    bool quota_exhausted = false;             ///< any error object says so
};

ErrorBodyFacts read_error_body(std::string_view body) {
    ErrorBodyFacts facts;
    if (body.empty() || body.size() > (1u << 20)) return facts;
    rapidjson::Document doc;
    if (!parse_json_limited(doc, body)) return facts;
    auto read = [&](const rapidjson::Value& holder) {
        if (!holder.IsObject()) return;
        auto e = holder.FindMember("error");
        if (e == holder.MemberEnd()) return;
        if (!facts.retry_delay) facts.retry_delay = retry_info_delay(e->value);
        facts.quota_exhausted = facts.quota_exhausted || error_says_quota(e->value);
    };
    if (doc.IsArray())
        for (const auto& item : doc.GetArray()) read(item);
    else
        read(doc);
    return facts;
}

/// retry-after-ms, then Retry-After (seconds or an HTTP-date).
std::optional<Milliseconds> header_retry_hint(const Headers& headers) {
    for (const auto& [name, value] : headers)
        if (header_name_equals(name, "retry-after-ms"))
            if (auto ms = parse_seconds(value)) return Milliseconds(ms->count() / 1000);
    for (const auto& [name, value] : headers) {
        if (!header_name_equals(name, "retry-after")) continue;
        if (auto ms = parse_seconds(trim(value))) return ms;
        if (auto ms = delay_until_http_date(trim(value))) return ms;
    }
    return std::nullopt;
}

}  // namespace

std::optional<Milliseconds> parse_retry_hint(const Headers& headers, std::string_view body) {
    if (auto hint = header_retry_hint(headers)) return hint;
    return read_error_body(body).retry_delay;
}

bool says_quota_exhausted(std::string_view body) { return read_error_body(body).quota_exhausted; }

Error http_status_error(ResponseHead& head, std::string body) {
    Error e(ErrorCode::http_status,
            "HTTP " + std::to_string(head.status) + (head.reason.empty() ? "" : " " + head.reason));
    e.status = head.status;
    // The body is parsed once, for its retry hint and its quota verdict.
    const ErrorBodyFacts facts = read_error_body(body);
    e.retry_after = header_retry_hint(head.headers);
    if (!e.retry_after) e.retry_after = facts.retry_delay;
    e.request_id = request_id_of(head.headers);
    e.quota_exhausted = head.status >= 400 && facts.quota_exhausted;
    e.headers = std::move(head.headers);
    e.body = std::move(body);
    return e;
}

}  // namespace nous::http::detail
