// Telemetry: the observer's events in order for a streamed success, a whole
// success, an error before the head, errors mid-stream, and a failover
// through a router; their attributes under the GenAI names; the Prometheus
// text (types, cumulative buckets, +Inf equal to _count, token sums equal to
// the results' usage); 16 threads recording at once; the default observer.

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "nous/llm/chat.hpp"
#include "nous/llm/metrics.hpp"
#include "nous/llm/router.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::MockServer;
using nous::http::MockServerOptions;
using Kind = CallEvent::Kind;

namespace {

/// Every event, as the kinds in order and each one's attributes.
struct Recorder final : Observer {
    std::mutex mutex;
    std::vector<Kind> kinds;
    std::vector<Attributes> attributes;
    std::vector<std::string> deployments;
    std::vector<std::int64_t> chunks;
    std::vector<bool> timed;  ///< end: time to first chunk and per chunk both set
    void on_event(const CallEvent& e) noexcept override {
        std::lock_guard lock(mutex);
        kinds.push_back(e.kind);
        attributes.push_back(e.attributes());
        deployments.emplace_back(e.deployment);
        chunks.push_back(e.chunks);
        timed.push_back(e.time_to_first_chunk.has_value() && e.time_per_output_chunk.has_value());
    }
    std::string attribute(std::size_t event, const std::string& name) {
        for (const auto& [key, value] : attributes[event])
            if (key == name) {
                if (auto s = std::get_if<std::string>(&value)) return *s;
                if (auto i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
                if (auto v = std::get_if<std::vector<std::string>>(&value))
                    return v->empty() ? "" : v->front();
            }
        return "(none)";
    }
};

ChatRequest request_to(const MockServer& server, bool stream, std::shared_ptr<Observer> observer) {
    ChatRequest r;
    r.base_url = server.base_url() + "/v1";
    r.api_key = "sk-test";
    r.model = "mock-1";
    r.messages = {ChatMessage::user("hello")};
    r.stream = stream;
    r.observer = std::move(observer);
    return r;
}

MockServerOptions faulty(const std::string& fault) {
    MockServerOptions o;
    o.fault = fault;
    return o;
}

nous::http::Options no_retries() {
    nous::http::Options o;
    o.max_retries = 0;
    return o;
}

}  // namespace

TEST_CASE("observer: a streamed success, start to end, with the GenAI attributes") {
    MockServer server;
    server.start();
    auto recorder = std::make_shared<Recorder>();
    auto r = run_chat(request_to(server, true, recorder));
    REQUIRE(r);
    CHECK(recorder->kinds ==
          std::vector<Kind>{Kind::start, Kind::response_head, Kind::first_content, Kind::end});
    CHECK(recorder->chunks.back() == 16);  // the mock's 16 tokens
    CHECK(recorder->timed.back());
    CHECK(recorder->attribute(0, "gen_ai.operation.name") == "chat");
    CHECK(recorder->attribute(0, "gen_ai.provider.name") == "openai");
    CHECK(recorder->attribute(0, "gen_ai.request.model") == "mock-1");
    CHECK(recorder->attribute(0, "server.address") == "127.0.0.1");
    CHECK(recorder->attribute(0, "server.port") == std::to_string(server.port()));
    CHECK(recorder->attribute(3, "gen_ai.response.id") == r->request_id);
    CHECK(recorder->attribute(3, "gen_ai.response.finish_reasons") == "stop");
    CHECK(recorder->attribute(3, "gen_ai.usage.output_tokens") ==
          std::to_string(r->usage->output_tokens));
    CHECK(recorder->attribute(3, "error.type") == "(none)");
}

TEST_CASE("observer: a whole success has no content events to time") {
    MockServer server;
    server.start();
    auto recorder = std::make_shared<Recorder>();
    ChatRequest gemini = request_to(server, false, recorder);
    gemini.provider = Provider::gemini;
    gemini.base_url = server.base_url() + "/v1beta";
    REQUIRE(run_chat(gemini));
    CHECK(recorder->kinds == std::vector<Kind>{Kind::start, Kind::response_head, Kind::end});
    CHECK_FALSE(recorder->timed.back());
    CHECK(recorder->attribute(0, "gen_ai.provider.name") == "gcp.gemini");
}

TEST_CASE("observer: an error before the head, and errors in the middle of a stream") {
    auto recorder = std::make_shared<Recorder>();
    ChatRequest refused;
    refused.base_url = "http://127.0.0.1:1/v1";
    refused.model = "m";
    refused.messages = {ChatMessage::user("hi")};
    refused.observer = recorder;
    REQUIRE_FALSE(run_chat(refused, no_retries()));
    CHECK(recorder->kinds == std::vector<Kind>{Kind::start, Kind::error});
    CHECK(recorder->attribute(1, "error.type") == "connect_failed");

    MockServer midstream(faulty("midstream_error")), truncated(faulty("truncate")),
        limited(faulty("rate_limit"));
    midstream.start();
    truncated.start();
    limited.start();
    auto events = std::make_shared<Recorder>();
    auto with_error_event = run_chat(request_to(midstream, true, events), no_retries());
    REQUIRE(with_error_event);  // the provider's error event ends it: a result that says so
    CHECK(events->kinds ==
          std::vector<Kind>{Kind::start, Kind::response_head, Kind::first_content, Kind::end});
    CHECK(events->attribute(3, "error.type") == "stream_error");
    auto cut = std::make_shared<Recorder>();
    REQUIRE_FALSE(run_chat(request_to(truncated, true, cut), no_retries()));
    CHECK(cut->kinds ==
          std::vector<Kind>{Kind::start, Kind::response_head, Kind::first_content, Kind::error});
    CHECK(cut->attribute(3, "error.type") == "truncated");
    auto status = std::make_shared<Recorder>();
    REQUIRE_FALSE(run_chat(request_to(limited, false, status), no_retries()));
    CHECK(status->kinds == std::vector<Kind>{Kind::start, Kind::response_head, Kind::error});
    CHECK(status->attribute(2, "error.type") == "429");
}

TEST_CASE("observer: a failover through a router is one operation, each attempt told") {
    MockServer failing(faulty("overloaded")), healthy;
    failing.start();
    healthy.start();
    auto recorder = std::make_shared<Recorder>();
    RouterConfig config;
    Deployment a;
    a.name = "east";
    a.base_url = failing.base_url() + "/v1";
    a.model = "mock-1";
    Deployment b = a;
    b.name = "west";
    b.base_url = healthy.base_url() + "/v1";
    b.weight = 0;
    config.deployments = {a, b};
    config.observer = recorder;  // the router's observer
    auto router = Router::create(config);
    REQUIRE(router);
    ChatRequest request;
    request.messages = {ChatMessage::user("hello")};
    REQUIRE(router.value()->chat(request, {}, [](const Delta&) { return true; }));
    // East's 503 has a head too; its failover names the reason.
    CHECK(recorder->kinds == std::vector<Kind>{Kind::start, Kind::attempt, Kind::response_head,
                                               Kind::failover, Kind::attempt, Kind::response_head,
                                               Kind::first_content, Kind::end});
    CHECK(recorder->deployments[1] == "east");
    CHECK(recorder->attribute(3, "nous.failover.reason").find("HTTP 503") == 0);
    CHECK(recorder->deployments.back() == "west");
    CHECK(recorder->attribute(7, "nous.deployment") == "west");
}

TEST_CASE("the Prometheus text parses, its buckets add up, and its token sums are the usage") {
    MockServer server;
    server.start();
    auto metrics = std::make_shared<Metrics>();
    std::int64_t input = 0, output = 0;
    for (bool stream : {true, false, true}) {
        auto r = run_chat(request_to(server, stream, metrics));
        REQUIRE(r);
        REQUIRE(r->usage);
        input += r->usage->input_tokens;
        output += r->usage->output_tokens;
    }
    MockServer failing(faulty("server_error"));
    failing.start();
    REQUIRE_FALSE(run_chat(request_to(failing, true, metrics), no_retries()));
    const std::string text = metrics->prometheus_text();
    std::istringstream lines(text);
    std::string line;
    std::map<std::string, std::string> types;
    std::map<std::string, double> sums, counts, infs;
    std::map<std::string, double> last_bucket;  ///< per series: buckets must not fall
    while (std::getline(lines, line)) {
        if (line.rfind("# TYPE ", 0) == 0) {
            std::istringstream t(line.substr(7));
            std::string name, type;
            t >> name >> type;
            types[name] = type;
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        const auto brace = line.find('{'), close = line.rfind('}');
        REQUIRE(brace != std::string::npos);
        REQUIRE(close != std::string::npos);
        const std::string name = line.substr(0, brace);
        std::string labels = line.substr(brace + 1, close - brace - 1);
        const double value = std::stod(line.substr(close + 2));
        const auto le = labels.find(",le=\"");
        if (le != std::string::npos) {
            const std::string bound = labels.substr(le + 5, labels.size() - le - 6);
            labels = labels.substr(0, le);
            const std::string series = name + "{" + labels + "}";
            CHECK(value >= last_bucket[series]);  // cumulative
            last_bucket[series] = value;
            if (bound == "+Inf") infs[series] = value;
        } else if (name.ends_with("_sum")) {
            sums[name.substr(0, name.size() - 4) + "_bucket{" + labels + "}"] = value;
        } else if (name.ends_with("_count")) {
            counts[name.substr(0, name.size() - 6) + "_bucket{" + labels + "}"] = value;
        }
    }
    for (const char* family :
         {"gen_ai_client_operation_duration_seconds",
          "gen_ai_client_operation_time_to_first_chunk_seconds",
          "gen_ai_client_operation_time_per_output_chunk_seconds", "gen_ai_client_token_usage"})
        CHECK(types[family] == "histogram");
    REQUIRE_FALSE(infs.empty());
    for (const auto& [series, inf] : infs) CHECK(counts[series] == inf);
    const std::string base =
        "gen_ai_operation_name=\"chat\",gen_ai_provider_name=\"openai\",gen_ai_request_model="
        "\"mock-1\"";
    CHECK(sums["gen_ai_client_token_usage_bucket{" + base + ",gen_ai_token_type=\"input\"}"] ==
          input);
    CHECK(sums["gen_ai_client_token_usage_bucket{" + base + ",gen_ai_token_type=\"output\"}"] ==
          output);
    CHECK(counts["gen_ai_client_operation_duration_seconds_bucket{" + base + "}"] == 3);
    CHECK(counts["gen_ai_client_operation_duration_seconds_bucket{" + base +
                 ",error_type=\"500\"}"] == 1);
    CHECK(counts["gen_ai_client_operation_time_to_first_chunk_seconds_bucket{" + base + "}"] == 2);
}

TEST_CASE("16 threads record at once into one Metrics") {
    Metrics metrics;
    ChatResult result;
    result.usage = Usage{};
    result.usage->input_tokens = 3;
    result.usage->output_tokens = 5;
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            const std::string model = "model-" + std::to_string(t % 4);
            for (int i = 0; i < 1000; ++i) {
                CallEvent e;
                e.kind = Kind::end;
                e.provider = "openai";
                e.request_model = model;
                e.streamed = true;
                e.elapsed = std::chrono::milliseconds(i % 50);
                e.time_to_first_chunk = std::chrono::milliseconds(1);
                e.result = &result;
                metrics.on_event(e);
                if (i % 100 == 0) (void)metrics.prometheus_text();  // rendering while recording
            }
        });
    for (auto& t : threads) t.join();
    const std::string text = metrics.prometheus_text();
    double calls = 0, output = 0;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("gen_ai_client_operation_duration_seconds_count{", 0) == 0)
            calls += std::stod(line.substr(line.rfind(' ')));
        if (line.rfind("gen_ai_client_token_usage_sum{", 0) == 0 &&
            line.find("gen_ai_token_type=\"output\"") != std::string::npos)
            output += std::stod(line.substr(line.rfind(' ')));
    }
    CHECK(calls == 16000);
    CHECK(output == 16000 * 5);
}

TEST_CASE("the default observer hears the calls that name none") {
    MockServer server;
    server.start();
    auto recorder = std::make_shared<Recorder>();
    set_default_observer(recorder);
    CHECK(default_observer() == recorder);
    REQUIRE(run_chat(request_to(server, false, nullptr)));
    set_default_observer(nullptr);
    REQUIRE(run_chat(request_to(server, false, nullptr)));
    CHECK(recorder->kinds == std::vector<Kind>{Kind::start, Kind::response_head, Kind::end});
}
