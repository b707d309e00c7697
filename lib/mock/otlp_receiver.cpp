// The mock's OTLP/HTTP receiver (otlp_receiver.hpp).

#include "otlp_receiver.hpp"

#include "nous/http/json.hpp"
#include "provider_formats.hpp"
#include "wire.hpp"

namespace nous::http::mock {

namespace {

/// OTLP/HTTP's error body: a google.rpc.Status (code 3: INVALID_ARGUMENT).
void refuse(MockResponse& response, int status, const std::string& why) {
    response.status = status;
    response.headers = {{"Content-Type", "application/json"}};
    response.body = R"({"code":3,"message":)" + json_string(why) + "}";
}

void keep(std::vector<std::string>& list, std::string body, std::size_t bound) {
    if (list.size() >= bound) list.erase(list.begin());
    list.push_back(std::move(body));
}

std::string json_list(const std::vector<std::string>& bodies) {
    std::string out = "[";
    for (std::size_t i = 0; i < bodies.size(); ++i) out += (i ? "," : "") + bodies[i];
    return out + "]";
}

}  // namespace

bool OtlpReceiver::answer(const MockRequest& request, const std::string& route,
                          MockResponse& response) {
    if (route == "/otlp" && request.method == "GET") {
        std::lock_guard lock(mutex_);
        response.headers = {{"Content-Type", "application/json"}};
        response.body =
            R"({"traces":)" + json_list(traces_) + R"(,"metrics":)" + json_list(metrics_) + "}";
        return true;
    }
    const bool traces = route == "/v1/traces", metrics = route == "/v1/metrics";
    if (!traces && !metrics) return false;
    if (request.method != "POST") {
        refuse(response, 405, "OTLP/HTTP takes POST");
        return true;
    }
    // A collector in trouble, on request: what an exporter must retry (429,
    // 503, with Retry-After) and what it must not (500).
    if (auto fault = request.header("x-mock-fault")) {
        if (*fault == "rate_limit" || *fault == "overloaded") {
            refuse(response, *fault == "rate_limit" ? 429 : 503, "the mock collector is busy");
            response.headers.emplace_back("Retry-After", "1");
            return true;
        }
        if (*fault == "server_error") {
            refuse(response, 500, "the mock collector failed");
            return true;
        }
    }
    const auto type = request.header("content-type");
    if (!type || lower(*type).rfind("application/json", 0) != 0) {
        refuse(response, 415, "the mock receives OTLP/HTTP JSON (Content-Type: application/json)");
        return true;
    }
    auto doc = nous::http::parse_json(request.body);
    const char* list = traces ? "resourceSpans" : "resourceMetrics";
    if (!doc || !doc.value()->IsObject() || !doc.value()->HasMember(list) ||
        !(*doc.value())[list].IsArray()) {
        refuse(response, 400, std::string("not an OTLP export request: no ") + list + " array");
        return true;
    }
    {
        std::lock_guard lock(mutex_);
        keep(traces ? traces_ : metrics_, request.body, kKept);
    }
    response.headers = {{"Content-Type", "application/json"}};
    response.body = "{}";  // an Export*ServiceResponse with no partial success
    return true;
}

}  // namespace nous::http::mock
