// OTLP export: the JSON a collector receives for a streamed call, a whole
// call, a failed call, an embeddings call and a routed call with failover
// (ids, kinds, 64-bit integers as strings, parent and child spans, status);
// the metrics as cumulative histograms; the OTEL_* variables; and a
// collector that is down, hangs, refuses, or asks to retry later, none of
// which changes a call's result; a full queue drops and counts.

#include "nous/llm/otlp.hpp"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <set>

#include "cli_run.hpp"
#include "fault_server.hpp"
#include "llm/telemetry/otlp_json.hpp"
#include "llm/telemetry/trace_ids.hpp"
#include "nous/http/client.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/embed.hpp"
#include "nous/llm/router.hpp"
#include "nous/mock/mock_server.hpp"
#include "test_helpers.hpp"

using namespace nous::llm;
using nous::http::MockServer;
using nous::http::MockServerOptions;
using nous::test::FaultServer;
using nous::test::Peer;

namespace {

OtlpSettings settings_for(const std::string& base) {
    OtlpSettings s;
    s.traces_endpoint = base + "/v1/traces";
    s.metrics_endpoint = base + "/v1/metrics";
    s.service_name = "otlp-test";
    s.timeout = std::chrono::milliseconds(5000);
    return s;
}

std::shared_ptr<OtlpExporter> exporter_for(OtlpSettings settings) {
    auto made = OtlpExporter::start(std::move(settings));
    REQUIRE(made);
    return made.value();
}

/// What the mock's receiver holds: GET /otlp, parsed.
rapidjson::Document received(const MockServer& server) {
    auto r = nous::http::request("GET", server.base_url() + "/otlp");
    REQUIRE(r);
    rapidjson::Document d;
    d.Parse(r->body.c_str());
    REQUIRE(d.IsObject());
    return d;
}

/// Every span of every traces request, in the order received.
std::vector<const rapidjson::Value*> spans_of(const rapidjson::Document& d) {
    std::vector<const rapidjson::Value*> out;
    for (const auto& request : d["traces"].GetArray())
        for (const auto& rs : request["resourceSpans"].GetArray())
            for (const auto& ss : rs["scopeSpans"].GetArray())
                for (const auto& span : ss["spans"].GetArray()) out.push_back(&span);
    return out;
}

/// An attribute's value object ({"stringValue":...}), or nullptr.
const rapidjson::Value* attribute(const rapidjson::Value& holder, const std::string& key) {
    for (const auto& a : holder["attributes"].GetArray())
        if (key == a["key"].GetString()) return &a["value"];
    return nullptr;
}

std::string string_attribute(const rapidjson::Value& holder, const std::string& key) {
    const auto* v = attribute(holder, key);
    if (!v) return "(none)";
    if (v->HasMember("stringValue")) return (*v)["stringValue"].GetString();
    if (v->HasMember("intValue")) return std::string("int:") + (*v)["intValue"].GetString();
    return "(other)";
}

bool is_hex(const rapidjson::Value& v, std::size_t length) {
    if (!v.IsString() || v.GetStringLength() != length) return false;
    std::string s = v.GetString();
    return s.find_first_not_of("0123456789abcdef") == std::string::npos &&
           s != std::string(length, '0');
}

bool is_decimal_string(const rapidjson::Value& v) {
    if (!v.IsString() || v.GetStringLength() == 0) return false;
    return std::string(v.GetString()).find_first_not_of("0123456789") == std::string::npos;
}

ChatRequest chat_to(const MockServer& server, bool stream) {
    ChatRequest r;
    r.base_url = server.base_url() + "/v1";
    r.api_key = "sk-test";
    r.model = "mock-1";
    r.messages = {ChatMessage::user("a secret prompt")};
    r.stream = stream;
    return r;
}

/// A call's start and end told straight to an observer: a span without HTTP.
void synthetic_call(Observer& o, std::uint64_t id) {
    CallEvent e;
    e.call_id = id;
    e.provider = "openai";
    e.request_model = "m";
    e.kind = CallEvent::Kind::start;
    o.on_event(e);
    e.kind = CallEvent::Kind::end;
    o.on_event(e);
}

/// A collector that answers every request with `reply` and counts them.
struct ScriptedCollector {
    std::atomic<int> requests{0};
    std::string reply;
    FaultServer server;
    explicit ScriptedCollector(std::string r)
        : reply(std::move(r)), server([this](Peer& peer, std::uint64_t) {
              while (peer.read_request()) {
                  ++requests;
                  if (!peer.send(reply)) return;
              }
          }) {}
    std::string base() const { return "http://127.0.0.1:" + std::to_string(server.port()); }
};

const std::string kAccepted =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

}  // namespace

TEST_CASE("otlp: a streamed call is one CLIENT span in OTLP JSON, with its metrics") {
    MockServer server;
    server.start();
    auto exporter = exporter_for(settings_for(server.base_url()));
    ChatRequest r = chat_to(server, true);
    r.observer = exporter;
    auto result = run_chat(r);
    REQUIRE(result);
    REQUIRE(exporter->flush());
    auto d = received(server);
    auto spans = spans_of(d);
    REQUIRE(spans.size() == 1);
    const auto& span = *spans[0];
    CHECK(is_hex(span["traceId"], 32));
    CHECK(is_hex(span["spanId"], 16));
    CHECK_FALSE(span.HasMember("parentSpanId"));
    CHECK(std::string(span["name"].GetString()) == "chat mock-1");
    CHECK(span["kind"].GetInt() == 3);  // SPAN_KIND_CLIENT, an integer
    CHECK(is_decimal_string(span["startTimeUnixNano"]));
    CHECK(is_decimal_string(span["endTimeUnixNano"]));
    CHECK(std::stoull(span["endTimeUnixNano"].GetString()) >=
          std::stoull(span["startTimeUnixNano"].GetString()));
    CHECK(string_attribute(span, "gen_ai.operation.name") == "chat");
    CHECK(string_attribute(span, "gen_ai.provider.name") == "openai");
    CHECK(string_attribute(span, "gen_ai.request.model") == "mock-1");
    CHECK(string_attribute(span, "server.port") ==
          "int:" + server.base_url().substr(server.base_url().rfind(':') + 1));
    CHECK(string_attribute(span, "gen_ai.usage.input_tokens") ==
          "int:" + std::to_string(result->usage->input_tokens));
    CHECK(string_attribute(span, "gen_ai.usage.output_tokens") ==
          "int:" + std::to_string(result->usage->output_tokens));
    CHECK(span["events"].GetArray().Size() == 1);   // the first chunk
    CHECK_FALSE(span["status"].HasMember("code"));  // UNSET
    // Prompts and answers are not exported unless asked for.
    CHECK(attribute(span, "gen_ai.input.messages") == nullptr);
    CHECK(attribute(span, "gen_ai.output.messages") == nullptr);
    const auto& resource = d["traces"][0]["resourceSpans"][0]["resource"];
    CHECK(string_attribute(resource, "service.name") == "otlp-test");
    CHECK(string_attribute(resource, "telemetry.sdk.name") == "nous-http");
    CHECK(string_attribute(resource, "telemetry.sdk.language") == "cpp");

    REQUIRE(d["metrics"].GetArray().Size() == 1);
    const auto& metrics =
        d["metrics"][0]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].GetArray();
    std::map<std::string, const rapidjson::Value*> by_name;
    for (const auto& m : metrics) by_name[m["name"].GetString()] = &m;
    REQUIRE(by_name.count("gen_ai.client.operation.duration"));
    REQUIRE(by_name.count("gen_ai.client.operation.time_to_first_chunk"));
    REQUIRE(by_name.count("gen_ai.client.token.usage"));
    const auto& duration = *by_name["gen_ai.client.operation.duration"];
    CHECK(std::string(duration["unit"].GetString()) == "s");
    CHECK(duration["histogram"]["aggregationTemporality"].GetInt() == 2);  // CUMULATIVE
    const auto& point = duration["histogram"]["dataPoints"][0];
    CHECK(std::string(point["count"].GetString()) == "1");
    CHECK(point["explicitBounds"].GetArray().Size() == 14);
    CHECK(point["bucketCounts"].GetArray().Size() == 15);
    std::uint64_t in_buckets = 0;
    for (const auto& b : point["bucketCounts"].GetArray()) {
        CHECK(is_decimal_string(b));
        in_buckets += std::stoull(b.GetString());
    }
    CHECK(in_buckets == 1);
    // Token usage: input and output only, as the conventions define the types.
    std::set<std::string> types;
    for (const auto& p :
         (*by_name["gen_ai.client.token.usage"])["histogram"]["dataPoints"].GetArray())
        types.insert(string_attribute(p, "gen_ai.token.type"));
    CHECK(types == std::set<std::string>{"input", "output"});
    exporter->shutdown();
    CHECK(exporter->stats().spans_exported == 1);
    CHECK(exporter->stats().spans_dropped == 0);
}

TEST_CASE("otlp: a failed call's span has status ERROR and error.type") {
    MockServerOptions o;
    o.fault = "server_error";
    MockServer server(o);
    server.start();
    MockServer collector;
    collector.start();
    auto exporter = exporter_for(settings_for(collector.base_url()));
    ChatRequest r = chat_to(server, false);
    r.observer = exporter;
    nous::http::Options no_retries;
    no_retries.max_retries = 0;
    auto result = run_chat(r, no_retries);
    REQUIRE_FALSE(result);
    REQUIRE(exporter->flush());
    auto document = received(collector);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 1);
    CHECK((*spans[0])["status"]["code"].GetInt() == 2);  // STATUS_CODE_ERROR
    CHECK(std::string((*spans[0])["status"]["message"].GetString()) == result.error().message);
    CHECK(string_attribute(*spans[0], "error.type") == "500");
}

TEST_CASE("otlp: a routed call with failover is a parent span with a child per attempt") {
    MockServerOptions failing;
    failing.fault = "server_error";
    MockServer down(failing), up;
    down.start();
    up.start();
    MockServer collector;
    collector.start();
    auto exporter = exporter_for(settings_for(collector.base_url()));
    RouterConfig config;
    config.observer = exporter;
    for (auto* s : {&down, &up}) {
        Deployment d;
        d.name = s == &down ? "first" : "second";
        d.base_url = s->base_url() + "/v1";
        d.model = s == &down ? "model-a" : "model-b";
        d.api_key = "sk";
        config.deployments.push_back(d);
    }
    config.deployments[1].weight = 0;  // the first is tried first
    auto router = Router::create(config);
    REQUIRE(router);
    ChatRequest r;
    r.messages = {ChatMessage::user("hi")};
    auto result = router.value()->chat(r);
    REQUIRE(result);
    REQUIRE(exporter->flush());
    auto document = received(collector);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 3);
    const rapidjson::Value* parent = nullptr;
    std::vector<const rapidjson::Value*> children;
    for (const auto* s : spans)
        (s->HasMember("parentSpanId") ? children.push_back(s) : void(parent = s));
    REQUIRE(parent);
    REQUIRE(children.size() == 2);
    for (const auto* c : children) {
        CHECK(std::string((*c)["traceId"].GetString()) == (*parent)["traceId"].GetString());
        CHECK(std::string((*c)["parentSpanId"].GetString()) == (*parent)["spanId"].GetString());
    }
    // In the order they ended: the failed attempt, then the one that answered.
    CHECK(string_attribute(*children[0], "nous.deployment") == "first");
    CHECK((*children[0])["status"]["code"].GetInt() == 2);
    CHECK(string_attribute(*children[0], "nous.failover.reason") != "(none)");
    CHECK(string_attribute(*children[1], "nous.deployment") == "second");
    CHECK(std::string((*children[1])["name"].GetString()) == "chat model-b");
    CHECK_FALSE((*children[1])["status"].HasMember("code"));
    CHECK_FALSE((*parent)["status"].HasMember("code"));
    CHECK(string_attribute(*parent, "nous.deployment") == "second");
}

TEST_CASE("otlp: an embeddings call is an `embeddings MODEL` span with its input tokens") {
    MockServer server;
    server.start();
    auto exporter = exporter_for(settings_for(server.base_url()));
    EmbedRequest r;
    r.base_url = server.base_url() + "/v1";
    r.api_key = "sk";
    r.model = "embed-1";
    r.inputs = {"one", "two", "three"};
    r.observer = exporter;
    auto result = embed(r);
    REQUIRE(result);
    REQUIRE(exporter->flush());
    auto d = received(server);
    auto spans = spans_of(d);
    REQUIRE(spans.size() == 1);
    CHECK(std::string((*spans[0])["name"].GetString()) == "embeddings embed-1");
    CHECK(string_attribute(*spans[0], "gen_ai.operation.name") == "embeddings");
    CHECK(string_attribute(*spans[0], "gen_ai.usage.input_tokens") ==
          "int:" + std::to_string(result->usage->input_tokens));
    CHECK(string_attribute(*spans[0], "gen_ai.embeddings.dimension.count") ==
          "int:" + std::to_string(result->dimensions));
    CHECK(attribute(*spans[0], "gen_ai.usage.output_tokens") == nullptr);
}

TEST_CASE("otlp: a call whose callback throws still ends its span, as an exception") {
    MockServer server;
    server.start();
    auto exporter = exporter_for(settings_for(server.base_url()));
    ChatRequest r = chat_to(server, true);
    r.observer = exporter;
    CHECK_THROWS_AS(run_chat(r, {}, [](const Delta&) -> bool { throw std::runtime_error("app"); }),
                    std::runtime_error);
    REQUIRE(exporter->flush());
    auto document = received(server);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 1);
    CHECK((*spans[0])["status"]["code"].GetInt() == 2);
    CHECK(string_attribute(*spans[0], "error.type") == "exception");
}

TEST_CASE("otlp: names and messages with quotes, backslashes and control bytes arrive intact") {
    MockServer collector;
    collector.start();
    auto exporter = exporter_for(settings_for(collector.base_url()));
    const std::string model = "m\"odel\\ with\n\ttabs \x01 and \xc3\xa9";
    const std::string message = "HTTP 500: \"bad\"\r\n\x1f";
    nous::http::Error error(nous::http::ErrorCode::http_status, message);
    CallEvent e;
    e.call_id = 7;
    e.provider = "openai";
    e.request_model = model;
    e.server_address = "host\"x";
    e.kind = CallEvent::Kind::start;
    exporter->on_event(e);
    e.kind = CallEvent::Kind::error;
    e.error = &error;
    e.error_type = "500";
    exporter->on_event(e);
    REQUIRE(exporter->flush());  // the receiver parsed it: a 400 otherwise
    auto document = received(collector);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 1);
    CHECK(std::string((*spans[0])["name"].GetString()) == "chat " + model);
    CHECK(std::string((*spans[0])["status"]["message"].GetString()) == message);
    CHECK(string_attribute(*spans[0], "server.address") == "host\"x");
    CHECK(string_attribute(*spans[0], "gen_ai.request.model") == model);
}

TEST_CASE("otlp: a call with the application's traceparent is a child span in its trace") {
    MockServer server;
    server.start();
    auto exporter = exporter_for(settings_for(server.base_url()));
    ChatRequest r = chat_to(server, false);
    r.observer = exporter;
    r.trace_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    REQUIRE(run_chat(r));
    r.trace_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";  // not sampled
    REQUIRE(run_chat(r));
    r.trace_parent =
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";  // upper case: not one
    REQUIRE(run_chat(r));
    EmbedRequest er;
    er.base_url = server.base_url() + "/v1";
    er.api_key = "sk";
    er.model = "embed-1";
    er.inputs = {"one"};
    er.observer = exporter;
    er.trace_parent = "00-11111111111111111111111111111111-2222222222222222-01";
    REQUIRE(embed(er));
    REQUIRE(exporter->flush());
    auto document = received(server);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 3);  // the unsampled call exported none
    CHECK(std::string((*spans[0])["traceId"].GetString()) == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK(std::string((*spans[0])["parentSpanId"].GetString()) == "00f067aa0ba902b7");
    CHECK((*spans[0])["flags"].GetInt() == 0x301);     // sampled, its parent remote
    CHECK_FALSE(spans[1]->HasMember("parentSpanId"));  // a malformed traceparent: a root
    CHECK(std::string((*spans[1])["traceId"].GetString()) != "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK((*spans[1])["flags"].GetInt() == 0x101);
    CHECK(std::string((*spans[2])["traceId"].GetString()) == "11111111111111111111111111111111");
    CHECK(std::string((*spans[2])["parentSpanId"].GetString()) == "2222222222222222");
}

TEST_CASE("otlp: prompts and answers are exported only when asked for") {
    MockServer server;
    server.start();
    auto settings = settings_for(server.base_url());
    settings.capture_content = true;
    auto exporter = exporter_for(settings);
    ChatRequest r = chat_to(server, false);
    r.system = "be brief";
    r.observer = exporter;
    auto result = run_chat(r);
    REQUIRE(result);
    REQUIRE(exporter->flush());
    auto document = received(server);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 1);
    rapidjson::Document input, output;
    input.Parse((*attribute(*spans[0], "gen_ai.input.messages"))["stringValue"].GetString());
    output.Parse((*attribute(*spans[0], "gen_ai.output.messages"))["stringValue"].GetString());
    REQUIRE(input.IsArray());
    REQUIRE(input.Size() == 2);
    CHECK(std::string(input[0]["role"].GetString()) == "system");
    CHECK(std::string(input[1]["parts"][0]["content"].GetString()) == "a secret prompt");
    REQUIRE(output.IsArray());
    CHECK(std::string(output[0]["parts"][0]["content"].GetString()) == result->text);
}

TEST_CASE("otlp: a collector that asks to retry later gets the batch again after its hint") {
    std::atomic<int> requests{0};
    FaultServer collector([&](Peer& peer, std::uint64_t) {
        while (peer.read_request()) {
            const bool first = requests++ == 0;
            const std::string reply =
                first ? "HTTP/1.1 503 Service Unavailable\r\nretry-after-ms: 20\r\n"
                        "Content-Length: 0\r\n\r\n"
                      : kAccepted;
            if (!peer.send(reply)) return;
        }
    });
    auto settings = settings_for("http://127.0.0.1:" + std::to_string(collector.port()));
    settings.metrics_endpoint.clear();
    auto exporter = exporter_for(settings);
    synthetic_call(*exporter, 1);
    CHECK(exporter->flush());
    CHECK(requests == 2);
    CHECK(exporter->stats().spans_exported == 1);
    CHECK(exporter->stats().spans_failed == 0);
}

TEST_CASE("otlp: a collector's 500 or 400 is not retried, and the spans are counted as failed") {
    for (const char* status : {"500 Internal Server Error", "400 Bad Request"}) {
        ScriptedCollector collector(std::string("HTTP/1.1 ") + status +
                                    "\r\nContent-Length: 0\r\n\r\n");
        auto settings = settings_for(collector.base());
        settings.metrics_endpoint.clear();
        auto exporter = exporter_for(settings);
        synthetic_call(*exporter, 1);
        synthetic_call(*exporter, 2);
        CHECK_FALSE(exporter->flush());
        CHECK(collector.requests == 1);
        CHECK(exporter->stats().spans_failed == 2);
        CHECK(exporter->stats().last_error.find(std::string(status).substr(0, 3)) !=
              std::string::npos);
    }
}

TEST_CASE("otlp: a collector's partial success is counted, said, and never sent again") {
    // OTLP/HTTP: a 200 whose partial_success rejects items is not retried;
    // the rejected items are not exported. int64 counts come as strings or numbers.
    auto answer = [](const std::string& body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    for (const std::string& body :
         {std::string(R"({"partialSuccess":{"rejectedSpans":"2","errorMessage":"span too old"}})"),
          std::string(
              R"({"partial_success":{"rejected_spans":2,"error_message":"span too old"}})")}) {
        INFO(body);
        ScriptedCollector collector(answer(body));
        auto settings = settings_for(collector.base());
        settings.metrics_endpoint.clear();
        auto exporter = exporter_for(settings);
        for (std::uint64_t id = 1; id <= 3; ++id) synthetic_call(*exporter, id);
        CHECK_FALSE(exporter->flush());
        CHECK(collector.requests == 1);
        const auto stats = exporter->stats();
        CHECK(stats.spans_exported == 1);
        CHECK(stats.spans_failed == 2);
        CHECK(stats.last_error == "traces: the collector rejected 2 of 3 spans: span too old");
    }
    // A warning with nothing rejected, or an empty answer, is a success.
    for (const std::string& body :
         {std::string(R"({"partialSuccess":{"errorMessage":"slow down"}})"), std::string()}) {
        ScriptedCollector collector(answer(body));
        auto settings = settings_for(collector.base());
        settings.metrics_endpoint.clear();
        auto exporter = exporter_for(settings);
        synthetic_call(*exporter, 1);
        CHECK(exporter->flush());
        CHECK(exporter->stats().spans_exported == 1);
    }
    // Metrics: rejected data points fail the export.
    ScriptedCollector collector(answer(R"({"partialSuccess":{"rejectedDataPoints":"5"}})"));
    auto settings = settings_for(collector.base());
    settings.traces_endpoint.clear();
    auto exporter = exporter_for(settings);
    synthetic_call(*exporter, 1);
    CHECK_FALSE(exporter->flush());
    CHECK(exporter->stats().metric_exports_failed == 1);
    CHECK(exporter->stats().last_error == "metrics: the collector rejected 5 data points");
}

TEST_CASE("otlp: a dead collector changes no call, and a flush gives up within its timeout") {
    MockServer server;
    server.start();
    // A port nothing listens on: bound, then closed.
    FaultServer* gone = new FaultServer([](Peer&, std::uint64_t) {});
    const std::string dead = "http://127.0.0.1:" + std::to_string(gone->port());
    delete gone;
    auto settings = settings_for(dead);
    settings.timeout = std::chrono::milliseconds(300);
    auto exporter = exporter_for(settings);
    ChatRequest r = chat_to(server, true);
    auto plain = run_chat(r);
    r.observer = exporter;
    auto observed = run_chat(r);
    REQUIRE(plain);
    REQUIRE(observed);
    CHECK(observed->text == plain->text);
    CHECK_FALSE(exporter->flush());
    CHECK(exporter->stats().spans_failed == 1);
    CHECK(exporter->stats().last_error.find("connect") != std::string::npos);
}

TEST_CASE("otlp: a collector that hangs holds the exporter's thread only, and a full queue drops") {
    std::promise<void> first_request;
    std::atomic<bool> told{false};
    FaultServer collector([&](Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        if (!told.exchange(true)) first_request.set_value();
        peer.stall();
    });
    auto settings = settings_for("http://127.0.0.1:" + std::to_string(collector.port()));
    settings.metrics_endpoint.clear();
    settings.timeout = std::chrono::milliseconds(2000);
    auto exporter = exporter_for(settings);
    // A full batch (512) wakes the exporter, which sends it and waits.
    std::uint64_t id = 0;
    for (int i = 0; i < 512; ++i) synthetic_call(*exporter, ++id);
    first_request.get_future().wait();
    // Meanwhile the queue takes 2048 and drops the rest, counted; the calls
    // telling it never wait.
    for (int i = 0; i < 2048 + 100; ++i) synthetic_call(*exporter, ++id);
    CHECK(exporter->stats().spans_dropped == 100);
    const auto before = std::chrono::steady_clock::now();
    CHECK_FALSE(exporter->shutdown());
    // The shutdown's flush is bounded by the timeout (the batch in flight
    // took one, the rest share another).
    CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(10));
    const auto stats = exporter->stats();
    CHECK(stats.spans_exported == 0);
    CHECK(stats.spans_failed + stats.spans_dropped == 512 + 2048 + 100);
    // After shutdown, spans are dropped, counted.
    synthetic_call(*exporter, ++id);
    CHECK(exporter->stats().spans_dropped == stats.spans_dropped + 1);
}

TEST_CASE("otlp: the settings the OTEL_* variables give") {
    nous::test::ScopedEnv env;
    SECTION("defaults") {
        auto s = OtlpSettings::from_environment();
        REQUIRE(s);
        REQUIRE(s.value());
        CHECK(s.value()->traces_endpoint == "http://localhost:4318/v1/traces");
        CHECK(s.value()->metrics_endpoint == "http://localhost:4318/v1/metrics");
        CHECK(s.value()->timeout == std::chrono::milliseconds(10000));
        CHECK(s.value()->metric_export_interval == std::chrono::milliseconds(60000));
        CHECK(s.value()->service_name == "unknown_service");
        CHECK_FALSE(s.value()->capture_content);
    }
    SECTION("every variable") {
        env.set("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4318/");
        env.set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://other:9000/m");
        env.set("OTEL_EXPORTER_OTLP_HEADERS", "api-key=abc%20def, x-tenant = t1");
        env.set("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
        env.set("OTEL_EXPORTER_OTLP_TIMEOUT", "2500");
        env.set("OTEL_METRIC_EXPORT_INTERVAL", "1000");
        env.set("OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-resource,deployment.environment=prod");
        env.set("OTEL_SERVICE_NAME", "from-name");
        env.set("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
        auto s = OtlpSettings::from_environment();
        REQUIRE(s);
        const OtlpSettings& v = *s.value();
        CHECK(v.traces_endpoint == "https://collector.example:4318/v1/traces");
        CHECK(v.metrics_endpoint == "http://other:9000/m");  // used as it is
        REQUIRE(v.headers.size() == 2);
        CHECK(v.headers[0] == std::pair<std::string, std::string>{"api-key", "abc def"});
        CHECK(v.headers[1] == std::pair<std::string, std::string>{"x-tenant", "t1"});
        CHECK(v.timeout == std::chrono::milliseconds(2500));
        CHECK(v.metric_export_interval == std::chrono::milliseconds(1000));
        CHECK(v.service_name == "from-name");  // OTEL_SERVICE_NAME wins
        REQUIRE(v.resource.size() == 1);
        CHECK(v.resource[0].first == "deployment.environment");
        CHECK(v.capture_content);
    }
    SECTION("service.name from the resource attributes when OTEL_SERVICE_NAME is unset") {
        env.set("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource");
        auto s = OtlpSettings::from_environment();
        REQUIRE(s);
        CHECK(s.value()->service_name == "from-resource");
    }
    SECTION("disabled") {
        env.set("OTEL_SDK_DISABLED", "TRUE");
        auto s = OtlpSettings::from_environment();
        REQUIRE(s);
        CHECK_FALSE(s.value().has_value());
    }
    SECTION("what cannot be used is refused, naming the variable") {
        const std::pair<const char*, const char*> bad[] = {
            {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
            {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"},
            {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"},
            {"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"},
            {"OTEL_EXPORTER_OTLP_TIMEOUT", "0"},
            {"OTEL_METRIC_EXPORT_INTERVAL", "-5"},
            {"OTEL_EXPORTER_OTLP_HEADERS", "no-equals-sign"},
            {"OTEL_EXPORTER_OTLP_HEADERS", "k=broken%2"},
            {"OTEL_RESOURCE_ATTRIBUTES", "=value"},
        };
        for (const auto& [name, value] : bad) {
            nous::test::ScopedEnv one;
            one.set(name, value);
            auto s = OtlpSettings::from_environment();
            INFO(name << "=" << value);
            REQUIRE_FALSE(s);
            CHECK(s.error().code == nous::http::ErrorCode::invalid_argument);
            CHECK(s.error().message.find(name) != std::string::npos);
        }
    }
}

// AddressSanitizer's allocator is not fork-safe (a child can hang on a lock
// a parent's thread held at the fork): the normal build runs it.
#ifndef NOUS_SANITIZED
TEST_CASE("otlp: a child of fork() draws span ids of its own, not its parent's next ones") {
    (void)nous::llm::detail::random_trace_id();  // seeded before the fork
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const int code = nous::test::in_child([&] {
        const auto id = nous::llm::detail::random_trace_id();
        return ::write(fds[1], id.data(), id.size()) == static_cast<ssize_t>(id.size()) ? 0 : 1;
    });
    REQUIRE(code == 0);
    nous::llm::detail::TraceId from_child{};
    REQUIRE(::read(fds[0], from_child.data(), from_child.size()) ==
            static_cast<ssize_t>(from_child.size()));
    ::close(fds[0]);
    ::close(fds[1]);
    CHECK(nous::llm::detail::random_trace_id() != from_child);
}
#endif

TEST_CASE("otlp: an exporter refuses an endpoint that is not an http(s) URL") {
    OtlpSettings s;
    s.traces_endpoint = "ftp://collector/v1/traces";
    auto made = OtlpExporter::start(s);
    REQUIRE_FALSE(made);
    CHECK(made.error().code == nous::http::ErrorCode::invalid_argument);
}

TEST_CASE("nouscli --otlp: the span reaches the collector, and a bad variable exits 2 first") {
    MockServer server;
    server.start();
    nous::test::ScopedEnv env;
    env.set("OPENAI_API_KEY", "sk-test");
    env.set("OTEL_EXPORTER_OTLP_ENDPOINT", server.base_url());
    env.set("OTEL_SERVICE_NAME", "cli-test");
    auto chat = nous::test::nouscli(
        {"chat", "hello", "--model", "mock-1", "--base-url", server.base_url() + "/v1", "--otlp"});
    CHECK(chat.code == 0);
    auto embedded = nous::test::nouscli(
        {"embed", "one", "--model", "e-1", "--base-url", server.base_url() + "/v1", "--otlp"});
    CHECK(embedded.code == 0);
    auto document = received(server);
    auto spans = spans_of(document);
    REQUIRE(spans.size() == 2);
    CHECK(std::string((*spans[0])["name"].GetString()) == "chat mock-1");
    CHECK(std::string((*spans[1])["name"].GetString()) == "embeddings e-1");

    env.set("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    const auto before = server.requests_served();
    auto refused = nous::test::nouscli(
        {"chat", "hello", "--model", "mock-1", "--base-url", server.base_url() + "/v1", "--otlp"});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("OTEL_EXPORTER_OTLP_PROTOCOL") != std::string::npos);
    CHECK(server.requests_served() == before);
}

TEST_CASE(
    "nouscli --otlp: a dead collector is said on stderr and changes neither output nor exit") {
    MockServer server;
    server.start();
    FaultServer* gone = new FaultServer([](Peer&, std::uint64_t) {});
    const std::string dead = "http://127.0.0.1:" + std::to_string(gone->port());
    delete gone;
    nous::test::ScopedEnv env;
    env.set("OPENAI_API_KEY", "sk-test");
    env.set("OTEL_EXPORTER_OTLP_ENDPOINT", dead);
    env.set("OTEL_EXPORTER_OTLP_TIMEOUT", "300");
    env.set("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20OTLPSECRET");
    auto plain = nous::test::nouscli(
        {"chat", "hello", "--model", "mock-1", "--base-url", server.base_url() + "/v1"});
    auto exported = nous::test::nouscli(
        {"chat", "hello", "--model", "mock-1", "--base-url", server.base_url() + "/v1", "--otlp"});
    CHECK(exported.code == 0);
    CHECK(exported.out == plain.out);
    CHECK(exported.err.find("OTLP export failed") != std::string::npos);
    CHECK(exported.err.find("OTLPSECRET") == std::string::npos);
}

TEST_CASE("otlp: a double that is not finite is written as the protobuf JSON mapping's string") {
    // A Writer writes nothing for NaN or infinity: the batch would be broken JSON.
    nous::llm::detail::OtlpSource source;
    source.resource = {{"a.nan", std::nan("")},
                       {"b.inf", std::numeric_limits<double>::infinity()},
                       {"c.neg", -std::numeric_limits<double>::infinity()},
                       {"d.one", 1.5}};
    const std::string json = nous::llm::detail::traces_request_json(source, {});
    rapidjson::Document d;
    d.Parse(json.c_str());
    REQUIRE_FALSE(d.HasParseError());
    const auto& attrs = d["resourceSpans"][0]["resource"]["attributes"];
    REQUIRE(attrs.Size() == 4);
    CHECK(std::string(attrs[0]["value"]["doubleValue"].GetString()) == "NaN");
    CHECK(std::string(attrs[1]["value"]["doubleValue"].GetString()) == "Infinity");
    CHECK(std::string(attrs[2]["value"]["doubleValue"].GetString()) == "-Infinity");
    CHECK(attrs[3]["value"]["doubleValue"].GetDouble() == 1.5);
}
