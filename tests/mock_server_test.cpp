#include "nous/mock/mock_server.hpp"

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fault_server.hpp"
#include "nous/http/client.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "test_helpers.hpp"

using namespace nous::http;
using nous::test::in_child;
using nous::test::wait_until;

TEST_CASE("mock server: chat completion JSON, models, small and large bodies") {
    MockServer server;
    server.start();
    auto r = post(server.base_url() + "/v1/chat/completions",
                  R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})");
    REQUIRE(r.ok());
    auto doc = parse_json(r->body);
    REQUIRE(doc.ok());
    auto& d = *doc.value();
    CHECK(std::string(d["model"].GetString()) == "gpt-x");
    CHECK(std::string(d["choices"][0]["message"]["content"].GetString()).find("mock server") !=
          std::string::npos);
    CHECK(post(server.base_url() + "/small", "{}")->body.size() == 1024);
    CHECK(post(server.base_url() + "/large", "{}")->body.size() == 256 * 1024);
    auto bad = post(server.base_url() + "/v1/chat/completions", "not json", {}, Options{});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().status == 400);
}

TEST_CASE("mock server: a request body nested a million deep is a 400, and the server goes on") {
    MockServer server;
    server.start();
    Options options;
    options.max_retries = 0;
    for (const char* route : {"/v1/chat/completions", "/v1/responses", "/v1/messages"}) {
        INFO(route);
        auto deep = post(server.base_url() + route, std::string(1'000'000, '['), {}, options);
        REQUIRE_FALSE(deep.ok());
        CHECK(deep.error().status == 400);
    }
    auto after = post(server.base_url() + "/v1/chat/completions", R"({"model":"m"})", {}, options);
    CHECK(after.ok());
}

TEST_CASE("mock server: a number past a double's range, or text not UTF-8, is a 400") {
    // Held as infinity, a schema's const was echoed as `{"a":}`.
    MockServer server;
    server.start();
    Options options;
    options.max_retries = 0;
    const std::string schema_const =
        R"({"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":)"
        R"({"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object",)"
        R"("properties":{"a":{"const":1.8e308}},"required":["a"],"additionalProperties":false}}}})";
    const std::string temperature =
        R"({"model":"m","temperature":-1.8e308,"messages":[{"role":"user","content":"hi"}]})";
    for (const auto& [route, body] : std::vector<std::pair<std::string, std::string>>{
             {"/v1/chat/completions", schema_const},
             {"/v1/chat/completions", temperature},
             {"/v1/embeddings", R"({"model":"e","input":"t","dimensions":2e308})"}}) {
        INFO(route << " " << body);
        auto r = post(server.base_url() + route, body, {}, options);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 400);
        CHECK_THAT(r.error().body, Catch::Contains("range of a double"));
    }
    // JSON is UTF-8: a body that is not is refused, as a provider refuses it.
    for (const char* route : {"/v1/chat/completions", "/v1/embeddings"}) {
        INFO(route);
        auto latin1 =
            post(server.base_url() + route,
                 "{\"model\":\"m\",\"input\":\"caf\xe9\",\"messages\":[{\"role\":\"user\","
                 "\"content\":\"caf\xe9\"}]}",
                 {}, options);
        REQUIRE_FALSE(latin1.ok());
        CHECK(latin1.error().status == 400);
        CHECK_THAT(latin1.error().body, Catch::Contains("not UTF-8"));
    }
    // The largest double is a number like any other.
    auto fine = post(
        server.base_url() + "/v1/chat/completions",
        R"({"model":"m","messages":[{"role":"user","content":"hi"}],"n":1.7976931348623157e308})",
        {}, options);
    CHECK(fine.ok());
}

/// A request the mock answers (`says` nullptr) or refuses with a 400 whose
/// body holds `says`.
struct RefusalCase {
    std::string route, body;
    const char* says;
};

/// Each case posted to a fresh mock; the refusals' bodies returned in order.
std::vector<nous::http::Error> check_refusals(const std::vector<RefusalCase>& cases) {
    MockServer server;
    server.start();
    Options options;
    options.max_retries = 0;
    std::vector<nous::http::Error> refusals;
    for (const RefusalCase& c : cases) {
        INFO(c.route << " " << c.body);
        auto r = post(server.base_url() + c.route, c.body, {}, options);
        if (!c.says) {
            CHECK(r.ok());
            continue;
        }
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 400);
        CHECK_THAT(r.error().body, Catch::Contains(c.says));
        refusals.push_back(r.error());
    }
    return refusals;
}

/// `n` OpenAI chat tools, as JSON array members.
std::string many_tools(int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
        out += std::string(i ? "," : "") + R"({"type":"function","function":{"name":"f)" +
               std::to_string(i) + R"(","parameters":{"type":"object"}}})";
    return out;
}

TEST_CASE(
    "mock server: what the provider refuses of a request's settings is its 400, in its words") {
    // OpenAI's chat takes max_tokens from 1, the Responses API
    // max_output_tokens from 16, Anthropic max_tokens from 1.
    const std::string user = R"("messages":[{"role":"user","content":"hi"}])";
    const std::string thinking = R"("thinking":{"type":"enabled","budget_tokens":1024},)";
    check_refusals({
        {"/v1/chat/completions", R"({"model":"m","max_tokens":0,)" + user + "}",
         R"({"error":{"message":"Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.","type":"invalid_request_error","param":"max_tokens","code":"integer_below_min_value"}})"},
        {"/v1/chat/completions", R"({"model":"m","max_completion_tokens":-3,)" + user + "}",
         "Expected a value >= 1, but got -3 instead."},
        {"/v1/chat/completions", R"({"model":"m","max_tokens":1,)" + user + "}", nullptr},
        {"/v1/chat/completions", R"({"model":"m","parallel_tool_calls":false,)" + user + "}",
         "'parallel_tool_calls' is only allowed when 'tools' are specified."},
        {"/v1/chat/completions", R"({"model":"m","tools":[)" + many_tools(129) + "]," + user + "}",
         R"({"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}})"},
        {"/v1/chat/completions", R"({"model":"m","tools":[)" + many_tools(128) + "]," + user + "}",
         nullptr},
        {"/v1/chat/completions", R"({"model":"m","tool_choice":"none",)" + user + "}",
         R"({"error":{"message":"Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}})"},
        {"/v1/responses", R"({"model":"m","input":"hi","max_output_tokens":15})",
         "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but "
         "got 15 instead."},
        {"/v1/responses", R"({"model":"m","input":"hi","max_output_tokens":16})", nullptr},
        {"/v1/messages", R"({"model":"m","max_tokens":0,)" + user + "}",
         R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Input should be greater than or equal to 1"}})"},
        {"/v1/messages", R"({"model":"m","max_tokens":1,)" + user + "}", nullptr},
        // Claude's thinking takes a temperature of 1 only, a top_p from 0.95,
        // and no forced tool choice.
        {"/v1/messages",
         R"({"model":"m","max_tokens":2048,"temperature":0.5,)" + thinking + user + "}",
         "`temperature` may only be set to 1 when thinking is enabled."},
        {"/v1/messages", R"({"model":"m","max_tokens":2048,"top_p":0.9,)" + thinking + user + "}",
         "`top_p` must be greater than or equal to 0.95"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":2048,"tool_choice":{"type":"any"},)" + thinking + user + "}",
         "Thinking may not be enabled when tool_choice forces tool use."},
        {"/v1/messages",
         R"({"model":"m","max_tokens":2048,"temperature":1,"top_p":0.95,"tool_choice":{"type":"auto"},)" +
             thinking + user + "}",
         nullptr},
    });
}

TEST_CASE(
    "mock server: a temperature past the provider's range, and a stop sequence the provider "
    "refuses") {
    // Anthropic and Bedrock take 0 to 1, the Responses API and Gemini 0 to 2,
    // each refusing more in its own words; OpenAI's chat format is left open
    // (the servers that speak it differ).
    const std::string user = R"("messages":[{"role":"user","content":"hi"}])";
    const std::string bedrock_user = R"("messages":[{"role":"user","content":[{"text":"hi"}]}])";
    const auto refusals = check_refusals({
        {"/v1/messages", R"({"model":"m","max_tokens":8,"temperature":1.5,)" + user + "}",
         R"({"type":"error","error":{"type":"invalid_request_error","message":"temperature: Input should be less than or equal to 1"}})"},
        {"/v1/messages", R"({"model":"m","max_tokens":8,"temperature":1,)" + user + "}", nullptr},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"stop_sequences":["END","\n"],)" + user + "}",
         "stop_sequences: each stop sequence must contain non-whitespace"},
        {"/v1/messages", R"({"model":"m","max_tokens":8,"stop_sequences":[""],)" + user + "}",
         "stop_sequences: each stop sequence must be non-empty"},
        {"/v1/responses", R"({"model":"m","input":"hi","temperature":2.5})",
         R"({"error":{"message":"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}})"},
        {"/v1/responses", R"({"model":"m","input":"hi","temperature":2})", nullptr},
        {"/v1beta/models/g:generateContent",
         R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":2.5}})",
         "it has a temperature value of 2.5 but the supported range is from 0 (inclusive) to "
         "2.0001 (exclusive)"},
        {"/v1beta/models/g:generateContent",
         R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":2}})",
         nullptr},
        {"/v1/chat/completions", R"({"model":"m","temperature":2.5,)" + user + "}", nullptr},
        {"/model/m/converse", R"({"inferenceConfig":{"temperature":1.5},)" + bedrock_user + "}",
         R"({"message":"1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1"})"},
        {"/model/m/converse",
         R"({"inferenceConfig":{"stopSequences":["END",""]},)" + bedrock_user + "}",
         "Value '' at 'inferenceConfig.stopSequences.2.member' failed to satisfy constraint: "
         "Member must have length greater than or equal to 1"},
        {"/model/m/converse",
         R"({"inferenceConfig":{"temperature":1,"stopSequences":["END"]},)" + bedrock_user + "}",
         nullptr},
    });
    // Bedrock's two name their exception as AWS does, in x-amzn-ErrorType.
    REQUIRE(refusals.size() == 7);
    for (std::size_t i = 5; i < refusals.size(); ++i) {
        std::string type = "<none>";
        for (const auto& [name, value] : refusals[i].headers)
            if (name == "x-amzn-errortype") type = value;
        CHECK(type == "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/");
    }
}

TEST_CASE("mock server: a turn with nothing in it is refused in each provider's words") {
    // Anthropic takes an empty final assistant turn (a prefill), Gemini a
    // text part that carries a thought signature; OpenAI's formats take any.
    const auto refusals = check_refusals({
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":""},{"role":"user","content":"r"}]})",
         "messages.1: all messages must have non-empty content except for the optional final "
         "assistant message"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[]}]})",
         "messages.0: all messages must have non-empty content"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":""}]})",
         nullptr},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":" \n"}]})",
         "messages: text content blocks must contain non-whitespace text"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"system":" ","messages":[{"role":"user","content":"q"}]})",
         "system: text content blocks must contain non-whitespace text"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"system":[{"type":"text","text":"\n"}],"messages":[{"role":"user","content":"q"}]})",
         "system: text content blocks must contain non-whitespace text"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"q"},{"type":"text","text":""}]}]})",
         "messages: text content blocks must be non-empty"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"The answer is "}]})",
         "messages: final assistant content cannot end with trailing whitespace"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q "},{"role":"assistant","content":"a "},{"role":"user","content":"r"}]})",
         nullptr},
        {"/v1beta/models/g:generateContent",
         R"({"contents":[{"role":"user","parts":[{"text":"q"},{"text":""}]}]})",
         "Unable to submit request because it has an empty text parameter."},
        {"/v1beta/models/g:generateContent", R"({"contents":[{"role":"user","parts":[]}]})",
         "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty."},
        {"/v1beta/models/g:generateContent",
         R"({"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"","thoughtSignature":"s"}]},{"role":"user","parts":[{"text":"r"}]}]})",
         nullptr},
        {"/model/m/converse",
         R"({"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[]}]})",
         "The content field in the Message object at messages.1 is empty. Add a ContentBlock "
         "object to the content field and try again."},
        {"/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":""}]})",
         nullptr},
    });
    CHECK(refusals.size() == 10);
}

TEST_CASE(
    "mock server: a tool's name, schema or call id, or an image's type, past the provider's rule "
    "is its 400") {
    // OpenAI chat: 40 bytes; Responses: 64; Anthropic: ^[a-zA-Z0-9_-]+$;
    // Bedrock: [a-zA-Z0-9_.:-]{1,64}.
    const std::string id41(41, 'a'), id65(65, 'a');
    auto openai_turn = [](const std::string& id) {
        return R"({"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":")" +
               id +
               R"(","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":")" +
               id + R"(","content":"r"}]})";
    };
    auto anthropic_turn = [](const std::string& id) {
        return R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":")" +
               id +
               R"(","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
               id + R"(","content":"r"}]}]})";
    };
    auto bedrock_turn = [](const std::string& id) {
        return R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":")" +
               id +
               R"(","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":")" +
               id + R"(","content":[{"text":"r"}]}}]}]})";
    };
    const auto refusals = check_refusals({
        {"/v1/chat/completions", openai_turn(id41),
         "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum "
         "length 40, but got a string with length 41 instead."},
        {"/v1/chat/completions", openai_turn(std::string(40, 'a')), nullptr},
        {"/v1/responses",
         R"({"model":"m","input":[{"type":"function_call_output","call_id":")" + id65 +
             R"(","output":"r"}]})",
         "Invalid 'input[0].call_id': string too long. Expected a string with maximum length 64"},
        {"/v1/messages", anthropic_turn("tools.f:0"),
         "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
        {"/v1/messages", anthropic_turn("toolu_01-A"), nullptr},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"}],"tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"f","input_schema":{"type":"object"}}]})",
         "tools: Tool names must be unique."},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"}],"tools":[{"name":"f","input_schema":{}}]})",
         "tools.0.custom.input_schema.type: Input should be 'object'"},
        {"/v1/messages",
         R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"q"},{"type":"image","source":{"type":"base64","media_type":"text/plain","data":"aGk="}}]}]})",
         "messages.0.content.1.image.source.base64.media_type: Input should be 'image/jpeg', "
         "'image/png', 'image/gif' or 'image/webp'"},
        {"/model/m/converse", bedrock_turn("call 1"),
         "Value 'call 1' at 'messages.2.member.content.1.member.toolUse.toolUseId' failed to "
         "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.:-]+"},
        {"/model/m/converse", bedrock_turn(id65),
         "Member must have length less than or equal to 64"},
        {"/model/m/converse", bedrock_turn("tools.f:0"), nullptr},
        // Converse takes tool blocks only beside the tools (a toolConfig).
        {"/model/m/converse",
         R"({"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"c1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[{"text":"r"}]}}]}]})",
         "The toolConfig field must be defined when using toolUse and toolResult content "
         "blocks."},
    });
    CHECK(refusals.size() == 9);
}

TEST_CASE("mock server: a tool call without its result, or a result without its call, is a 400") {
    // Each body: the user's "q", then `rest`.
    auto openai = [](const std::string& rest) {
        return R"({"model":"m","messages":[{"role":"user","content":"q"})" + rest + "]}";
    };
    auto anthropic = [](const std::string& rest) {
        return R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"q"})" + rest +
               "]}";
    };
    const std::string call =
        R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]})";
    const std::string use =
        R"(,{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]})";
    const std::string next_user = R"(,{"role":"user","content":"r"})";
    auto result = [](const char* id) {
        return std::string(R"(,{"role":"user","content":[{"type":"tool_result","tool_use_id":")") +
               id + R"(","content":"x"}]})";
    };
    auto tool = [](const char* id) {
        return std::string(R"(,{"role":"tool","tool_call_id":")") + id + R"(","content":"x"})";
    };
    const auto refusals = check_refusals({
        {"/v1/chat/completions", openai(call + next_user),
         "An assistant message with 'tool_calls' must be followed by tool messages responding to "
         "each 'tool_call_id'. The following tool_call_ids did not have response messages: c1"},
        {"/v1/chat/completions", openai(tool("c9")),
         "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."},
        {"/v1/chat/completions", openai(call + tool("c1")), nullptr},
        {"/v1/messages", anthropic(use + next_user),
         "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
         "c1."},
        {"/v1/messages", anthropic(result("c9")),
         "messages.1: unexpected `tool_use_id` found in `tool_result` blocks: c9."},
        {"/v1/messages", anthropic(use + result("c1")), nullptr},
    });
    CHECK(refusals.size() == 4);
}

TEST_CASE("mock server: a streaming completion is SSE, chunked, ending with DONE") {
    MockServerOptions o;
    o.stream_tokens = 5;
    MockServer server(o);
    server.start();
    auto r = post(server.base_url() + "/v1/chat/completions",
                  R"({"model":"m","stream":true,"messages":[]})");
    REQUIRE(r.ok());
    CHECK(r->header("content-type") == std::optional<std::string_view>("text/event-stream"));
    std::size_t events = 0, at = 0;
    while ((at = r->body.find("data: ", at)) != std::string::npos) {
        ++events;
        at += 6;
    }
    CHECK(events == 7);  // 5 tokens, the finish chunk, [DONE]
    CHECK(r->body.size() >= 14);
    CHECK(r->body.substr(r->body.size() - 14) == "data: [DONE]\n\n");
}

TEST_CASE("mock server: 64 concurrent keep-alive connections are all served") {
    MockServer server;
    server.start();
    constexpr int clients = 64;
    std::atomic<int> ok{0};
    std::atomic<int> arrived{0};
    std::vector<std::thread> threads;
    // Each client holds its own pooled connection: 64 requests in flight at once at the barrier.
    for (int t = 0; t < clients; ++t)
        threads.emplace_back([&] {
            ++arrived;
            while (arrived < clients) std::this_thread::yield();
            for (int i = 0; i < 5; ++i) ok += post(server.base_url() + "/small", "{}").ok();
        });
    for (auto& t : threads) t.join();
    CHECK(ok == clients * 5);
    CHECK(server.connections_accepted() <= 64);
    CHECK(server.requests_served() == clients * 5);
}

TEST_CASE("mock server: the nagle switch still serves correct bodies") {
    MockServerOptions o;
    o.nagle = true;
    MockServer server(o);
    server.start();
    for (int i = 0; i < 5; ++i) {
        auto r = post(server.base_url() + "/small", "{}");
        REQUIRE(r.ok());
        CHECK(r->body == MockServer::small_body());
    }
    CHECK(server.connections_accepted() == 1);
}

#ifndef NOUS_SANITIZED  // the one test using these is off under the sanitizers
namespace {

/// Bytes the C heap holds in use now (glibc).
std::size_t heap_in_use() { return mallinfo2().uordblks; }

/// Sends `request` on a new loopback connection and reads until `marker`
/// has arrived; the connection stays open, unread, while the caller looks.
int open_and_read_until(std::uint16_t port, const std::string& request, const std::string& marker) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
    std::string got;
    char buf[4096];
    while (got.find(marker) == std::string::npos) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        REQUIRE(n > 0);
        got.append(buf, static_cast<std::size_t>(n));
    }
    return fd;
}

std::string chat_request(const std::string& body) {
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
           "application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace
#endif

TEST_CASE(
    "regression: the mock built a whole reply in memory, a 1,000,000-token reply holds O(1) per "
    "connection") {
#ifdef NOUS_SANITIZED
    WARN("the sanitizers' allocator hides glibc's heap counters: memory not checked");
    return;
#else
    MockServerOptions options;
    options.stream_tokens = 1'000'000;  // ~5 MB of text, ~100 MB of OpenAI events if built whole
    MockServer server(options);
    server.start();
    const std::size_t before = heap_in_use();
    // Neither reply is read past its first bytes: the server is blocked in
    // send() with the reply's first part in the socket buffers.
    int streamed = open_and_read_until(server.port(),
                                       chat_request(R"({"model":"m","stream":true})"), "data: ");
    int whole =
        open_and_read_until(server.port(), chat_request(R"({"model":"m"})"), "\"content\":\"Hello");
    const std::size_t during = heap_in_use();
    ::close(streamed);
    ::close(whole);
    INFO("heap grew by " << (during > before ? during - before : 0) << " bytes");
    CHECK(during < before + (2u << 20));
#endif
}

TEST_CASE("mock server: a long reply is the same text streamed and whole, in every format") {
    MockServerOptions options;
    options.stream_tokens = 20'000;
    MockServer server(options);
    server.start();
    std::string expected;
    const char* const words[] = {"Hello",   " from", " the",       " nous",   "-http", " mock",
                                 " server", ".",     " Tokens",    " arrive", " one",  " by",
                                 " one",    " as",   " requested", "!"};
    for (int i = 0; i < options.stream_tokens; ++i) expected += words[i % 16];
    for (auto provider : {nous::llm::Provider::openai, nous::llm::Provider::anthropic,
                          nous::llm::Provider::gemini, nous::llm::Provider::openai_responses}) {
        for (bool stream : {true, false}) {
            INFO(nous::llm::to_string(provider) << (stream ? " streamed" : " whole"));
            nous::llm::ChatRequest request;
            request.provider = provider;
            request.base_url =
                server.base_url() + (provider == nous::llm::Provider::gemini ? "/v1beta" : "/v1");
            request.model = "m";
            request.messages = {{"user", "hi"}};
            request.stream = stream;
            auto result = nous::llm::run_chat(request);
            REQUIRE(result.ok());
            CHECK(result->text == expected);
            REQUIRE(result->usage);
            CHECK(result->usage->output_tokens == options.stream_tokens);
        }
    }
}

// ---- the mock survives its clients (each named after its finding) -----------------

namespace {

int connect_loopback(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

/// Everything the server sends on `fd` until it closes (or 10 s of silence).
std::string read_to_close(int fd) {
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string got;
    char buf[4096];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
}

}  // namespace

TEST_CASE("a TLS client at the mock is answered 400 at once, not left to its handshake timeout") {
    // https:// against the plain mock: the ClientHello waited for a head
    // that never came, and the client gave up at its connect timeout (30 s).
    MockServer server;
    server.start();
    for (const std::string& first :
         {std::string("\x16\x03\x01\x00\xa5\x01\x00\x00", 8), std::string("\x00\x01garbage", 9)}) {
        int fd = connect_loopback(server.port());
        REQUIRE(fd >= 0);
        REQUIRE(::send(fd, first.data(), first.size(), MSG_NOSIGNAL) > 0);
        const std::string reply = read_to_close(fd);
        ::close(fd);
        CHECK(reply.rfind("HTTP/1.1 400 ", 0) == 0);
        CHECK(reply.find(first[0] == '\x16' ? "plain HTTP" : "not an HTTP/1.1 request") !=
              std::string::npos);
    }
    CHECK(server.requests_served() == 0);
    // Empty lines before a request line are ignored (RFC 9112 2.2), not refused.
    const std::string body = R"({"model":"mock-1","messages":[{"role":"user","content":"hi"}]})";
    int fd = connect_loopback(server.port());
    REQUIRE(fd >= 0);
    const std::string request =
        "\r\n\r\nPOST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
    const std::string reply = read_to_close(fd);
    ::close(fd);
    CHECK(reply.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(server.requests_served() == 1);
}

TEST_CASE("the mock reads a chunked request body, and refuses a framing it cannot read") {
    // Clients that stream their upload (Go's, Java's) send chunked bodies;
    // the mock took them for empty bodies and read the chunks as requests.
    MockServerOptions o;
    o.max_request_body = 1024;
    MockServer server(o);
    server.start();
    const std::string body = R"({"model":"mock-1","messages":[{"role":"user","content":"hi"}]})";
    std::string chunked;
    for (std::size_t i = 0; i < body.size(); i += 7) {
        const std::string piece = body.substr(i, 7);
        char size[16];
        std::snprintf(size, sizeof size, "%zx", piece.size());
        chunked += std::string(size) + (i == 0 ? ";ext=1" : "") + "\r\n" + piece + "\r\n";
    }
    chunked += "0\r\nX-Trailer: t\r\n\r\n";
    auto exchange = [&](const std::string& head_fields, const std::string& rest) {
        int fd = connect_loopback(server.port());
        REQUIRE(fd >= 0);
        const std::string request =
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + head_fields + "\r\n" + rest;
        REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
        std::string reply = read_to_close(fd);
        ::close(fd);
        return reply;
    };
    // Read whole, and the next request on the connection after it too.
    const std::string next =
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: "
        "close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    const std::string two = exchange("Transfer-Encoding: chunked\r\n", chunked + next);
    CHECK(two.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(two.find("HTTP/1.1 200 OK\r\n", 1) != std::string::npos);
    CHECK(server.requests_served() == 2);
    struct Bad {
        std::string fields, rest, status, why;
    };
    for (const Bad& bad :
         {Bad{"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n", "400",
              "both Transfer-Encoding and Content-Length"},
          Bad{"Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n", "400", "chunked only"},
          Bad{"Transfer-Encoding: chunked\r\n", "zz\r\n", "400", "not hexadecimal"},
          Bad{"Transfer-Encoding: chunked\r\n", "3\r\nabcd\r\n", "400", "not ended by CRLF"},
          Bad{"Transfer-Encoding: chunked\r\n", "ffffffffffffffff\r\n", "413", "at most 1024"},
          Bad{"Transfer-Encoding: chunked\r\n", "3ff\r\n" + std::string(1023, 'a') + "\r\n2\r\n",
              "413", "at most 1024"}}) {
        INFO(bad.fields << bad.rest.substr(0, 20));
        const std::string reply = exchange(bad.fields, bad.rest);
        CHECK(reply.rfind("HTTP/1.1 " + bad.status + " ", 0) == 0);
        CHECK(reply.find(bad.why) != std::string::npos);
        CHECK(reply.find("HTTP/1.1", 1) == std::string::npos);
    }
    CHECK(server.requests_served() == 2);
}

TEST_CASE(
    "mock_content_length_wrap: a Content-Length past the cap is 413 and the connection "
    "closes, never a request served for ever") {
    // The finding: 18446744073709551545 wrapped body_start + content_length,
    // the request stayed in the buffer and was answered 897,407 times in 2 s.
    MockServerOptions o;
    o.max_request_body = 1024;
    MockServer server(o);
    server.start();
    for (const std::string length :
         {"18446744073709551545", "99999999999999999999999", "2048", "12abc", "-1"}) {
        INFO("Content-Length: " << length);
        // Past the cap: 413; not a number at all: 400, named.
        const bool number = length.find_first_not_of("0123456789") == std::string::npos;
        int fd = connect_loopback(server.port());
        REQUIRE(fd >= 0);
        const std::string request =
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + length +
            "\r\n\r\n{}";
        REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
        const std::string reply = read_to_close(fd);
        ::close(fd);
        CHECK(reply.rfind(number ? "HTTP/1.1 413 Content Too Large\r\n" : "HTTP/1.1 400 ", 0) == 0);
        if (!number)
            CHECK(reply.find("a Content-Length that is not a number") != std::string::npos);
        // One response, then the close: not the same request answered again.
        CHECK(reply.find("HTTP/1.1", 1) == std::string::npos);
    }
    CHECK(server.requests_served() == 0);
    // A body at the cap is served.
    const std::string body =
        "{\"model\":\"m\",\"messages\":[],\"x\":\"" + std::string(990, 'a') + "\"}";
    REQUIRE(body.size() <= 1024);
    auto ok = post(server.base_url() + "/v1/chat/completions", body);
    REQUIRE(ok.ok());
    CHECK(ok->status == 200);
}

TEST_CASE(
    "mock_connection_cap: a connection past max_connections is answered 503 and closed, "
    "and the mock goes on") {
    MockServerOptions o;
    o.max_connections = 2;
    MockServer server(o);
    server.start();
    int a = connect_loopback(server.port()), b = connect_loopback(server.port());
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    // Both are being served (each has its thread): a request on each is answered.
    for (int fd : {a, b}) {
        const std::string request = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
        REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
        char buf[512];
        REQUIRE(::recv(fd, buf, sizeof buf, 0) > 0);
    }
    int c = connect_loopback(server.port());
    REQUIRE(c >= 0);
    const std::string refused = read_to_close(c);
    ::close(c);
    CHECK(refused.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK(refused.find("at most 2 connections") != std::string::npos);
    ::close(a);
    ::close(b);
    // Their threads end; the next connection is served.
    CHECK(wait_until([&] {
        auto r = post(server.base_url() + "/small", "{}", {}, [] {
            Options n;
            n.max_retries = 0;
            return n;
        }());
        return r.ok() && r->status == 200;
    }));
}

TEST_CASE(
    "mock_reap: ended connections are reaped however many came before, and stop() wakes a "
    "paced stream at once") {
    // The accept loop reaps the connections whose thread has ended (each
    // queues itself before it closes): under a cap of 4, 200 connections one
    // after the other are all served.
    MockServerOptions o;
    o.max_connections = 4;
    MockServer server(o);
    server.start();
    int served = 0;
    for (int i = 0; i < 200; ++i) {
        int fd = connect_loopback(server.port());
        REQUIRE(fd >= 0);
        const std::string request =
            "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
        served += read_to_close(fd).rfind("HTTP/1.1 200 ", 0) == 0;
        ::close(fd);
    }
    CHECK(served == 200);

    // A stream paced a token every 1,000 s: its first token, then stop()
    // wakes its sleep (a stop that waited on it would never return).
    MockServerOptions slow;
    slow.stream_tokens = 3;
    slow.tokens_per_second = 0.001;
    MockServer paced(slow);
    paced.start();
    int fd = connect_loopback(paced.port());
    REQUIRE(fd >= 0);
    const std::string body = R"({"model":"m","stream":true,"messages":[]})";
    const std::string request =
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0);
    std::string got;
    char buf[4096];
    while (got.find("data: ") == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        REQUIRE(n > 0);
        got.append(buf, static_cast<std::size_t>(n));
    }
    paced.stop();
    const std::string rest = read_to_close(fd);  // the server's side is shut
    ::close(fd);
    CHECK(rest.find("[DONE]") == std::string::npos);  // stopped, not finished
}

TEST_CASE("mock_idle_close: an idle keep-alive connection is closed after idle_close") {
    MockServerOptions o;
    o.idle_close = std::chrono::milliseconds(200);
    MockServer server(o);
    server.start();
    int fd = connect_loopback(server.port());
    REQUIRE(fd >= 0);
    // No request: the server closes it by itself (recv returns 0 well before 10 s).
    const auto start = std::chrono::steady_clock::now();
    CHECK(read_to_close(fd).empty());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    ::close(fd);
    CHECK(MockServerOptions{}.idle_close.count() > 0);  // on by default
}

TEST_CASE("mock_bad_options: negative tokens or rate are refused at start") {
    MockServerOptions o;
    o.stream_tokens = -1;
    MockServer negative(o);
    CHECK_THROWS_AS(negative.start(), std::invalid_argument);
    o = {};
    o.tokens_per_second = std::nan("");
    MockServer nan_rate(o);
    CHECK_THROWS_AS(nan_rate.start(), std::invalid_argument);
}

// RLIMIT_AS and the sanitizers' shadow memory do not mix; nor does TSan with fork.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE(
    "mock_thread_exhaustion: connections the mock has no thread for are refused 503, "
    "never std::terminate") {
    // The finding: a std::thread per connection with no try: under `ulimit -v
    // 600000`, 200 connections aborted the mock (exit 134).
    const int code = in_child([] {
        MockServer server;
        server.start();
        // Room for a few dozen more 8 MiB thread stacks, not 200.
        std::ifstream status("/proc/self/status");
        std::string key;
        long vm_kb = 0;
        while (status >> key)
            if (key == "VmSize:" && status >> vm_kb) break;
        rlimit limit{static_cast<rlim_t>(vm_kb + 200 * 1024) * 1024,
                     static_cast<rlim_t>(vm_kb + 200 * 1024) * 1024};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) return 10;
        std::vector<int> fds;
        for (int i = 0; i < 200; ++i) {
            int fd = connect_loopback(server.port());
            if (fd < 0) return 11;
            fds.push_back(fd);
        }
        int refused = 0;
        for (int fd : fds) {
            const std::string request = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
            ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
            char buf[64] = {};
            timeval tv{10, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            if (::recv(fd, buf, sizeof buf - 1, 0) > 0 &&
                std::string(buf).rfind("HTTP/1.1 503", 0) == 0)
                ++refused;
            ::close(fd);
        }
        return refused > 0 ? 0 : 12;  // alive, and some connections were refused
    });
    CHECK(code == 0);
}
#endif

TEST_CASE(
    "mock server: --rpm per key counts down for real, then the provider's 429 with retry-after") {
    MockServerOptions o;
    o.rpm = 2;
    MockServer server(o);
    server.start();
    Options no_retry;
    no_retry.max_retries = 0;
    const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    auto call = [&](const std::string& key) {
        return post(server.base_url() + "/v1/chat/completions", body,
                    {{"authorization", "Bearer " + key}}, no_retry);
    };
    auto first = call("sk-a");
    REQUIRE(first);
    CHECK(*first->header("x-ratelimit-limit-requests") == "2");
    CHECK(*first->header("x-ratelimit-remaining-requests") == "1");
    // The reset is the end of the current minute: within 60 s, never decades away.
    auto limit = nous::llm::parse_rate_limit(first->headers);
    REQUIRE(limit);
    REQUIRE(limit->requests_reset);
    CHECK(*limit->requests_reset - std::chrono::system_clock::now() <= std::chrono::seconds(61));
    REQUIRE(call("sk-a"));
    auto third = call("sk-a");
    auto other_key = call("sk-b");  // another key: its own window
    if (third) {
        // The minute turned between the calls: the window started again.
        CHECK(*third->header("x-ratelimit-remaining-requests") == "1");
    } else {
        CHECK(third.error().status == 429);
        REQUIRE(third.error().retry_after);
        CHECK(*third.error().retry_after <= std::chrono::seconds(60));
        CHECK(third.error().retry_after->count() > 0);
        CHECK(third.error().body.find("rate_limit_exceeded") != std::string::npos);
    }
    REQUIRE(other_key);
}

TEST_CASE("mock server: the fault option fails every request, a request's own header wins") {
    MockServerOptions o;
    o.fault = "server_error";
    MockServer server(o);
    server.start();
    Options no_retry;
    no_retry.max_retries = 0;
    const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    auto failed = post(server.base_url() + "/v1/chat/completions", body, {}, no_retry);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().status == 500);
    auto embeddings =
        post(server.base_url() + "/v1/embeddings", R"({"model":"m","input":"x"})", {}, no_retry);
    REQUIRE_FALSE(embeddings);
    CHECK(embeddings.error().status == 500);
    auto overridden = post(server.base_url() + "/v1/chat/completions", body,
                           {{"x-mock-fault", "quota"}}, no_retry);
    REQUIRE_FALSE(overridden);
    CHECK(overridden.error().quota_exhausted);
    MockServerOptions unknown;
    unknown.fault = "gremlins";
    MockServer bad(unknown);
    CHECK_THROWS_AS(bad.start(), std::invalid_argument);
}

// --- The mock under hostile schemas and batches: each answered, the server goes on. ---

namespace {

/// An OpenAI chat request whose structured answer follows `schema`.
std::string schema_request(const std::string& schema) {
    return R"({"model":"m","messages":[{"role":"user","content":"x"}],)"
           R"("response_format":{"type":"json_schema","json_schema":{"name":"r","schema":)" +
           schema + "}}}";
}

/// The mock still answers a plain chat request.
void require_serving(MockServer& server) {
    Options options;
    options.max_retries = 0;
    auto after = post(server.base_url() + "/v1/chat/completions",
                      R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", {}, options);
    REQUIRE(after.ok());
}

}  // namespace

TEST_CASE("mock server: a const nested 100,000 deep in a schema is a 400, not a crash") {
    MockServer server;
    server.start();
    Options options;
    options.max_retries = 0;
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    for (const std::string keyword : {"const", "enum"}) {
        const std::string value = keyword == "enum" ? "[" + deep + "]" : deep;
        auto r = post(server.base_url() + "/v1/chat/completions",
                      schema_request(R"({"type":"object","properties":{"a":{")" + keyword +
                                     R"(":)" + value + "}}}"),
                      {}, options);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().status == 400);
        CHECK_THAT(r.error().body, Catch::Contains("nested deeper than 64 levels"));
    }
    require_serving(server);
}

TEST_CASE("mock server: a schema whose answer would grow 8x a level is a 400 at its bound") {
    MockServer server;
    server.start();
    std::string schema = R"({"type":"string"})";
    for (int level = 0; level < 12; ++level)
        schema = R"({"type":"array","minItems":8,"items":)" + schema + "}";
    Options options;
    options.max_retries = 0;
    auto r = post(server.base_url() + "/v1/chat/completions", schema_request(schema), {}, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 400);
    CHECK_THAT(r.error().body, Catch::Contains("over 1048576 bytes"));
    require_serving(server);
}

TEST_CASE("mock server: Gemini's embeddings take 100 requests a batch, as Gemini does") {
    MockServer server;
    server.start();
    Options options;
    options.max_retries = 0;
    const auto batch = [](int n, int dimensions) {
        std::string body = R"({"requests":[)";
        for (int i = 0; i < n; ++i)
            body +=
                std::string(i ? "," : "") +
                R"({"model":"models/e","content":{"parts":[{"text":"t"}]},"outputDimensionality":)" +
                std::to_string(dimensions) + "}";
        return body + "]}";
    };
    const std::string url = server.base_url() + "/v1beta/models/e:batchEmbedContents";
    auto many = post(url, batch(101, 8), {}, options);
    REQUIRE_FALSE(many.ok());
    CHECK(many.error().status == 400);
    CHECK_THAT(many.error().body, Catch::Contains("at most 100 requests can be in one batch"));
    // 5,000 items of 65,536 values (the ~3 GB answer): refused, never made.
    auto huge = post(url, batch(5000, 65536), {}, options);
    REQUIRE_FALSE(huge.ok());
    CHECK(huge.error().status == 400);
    auto wide = post(
        server.base_url() + "/v1/embeddings",
        R"({"model":"e","dimensions":65536,"input":[)" +
            [] {
                std::string s;
                for (int i = 0; i < 2048; ++i) s += std::string(i ? "," : "") + "\"t\"";
                return s;
            }() +
            "]}",
        {}, options);
    REQUIRE_FALSE(wide.ok());
    CHECK_THAT(wide.error().body, Catch::Contains("values a request"));
    auto fine = post(url, batch(100, 8), {}, options);
    CHECK(fine.ok());
    require_serving(server);
}

TEST_CASE("mock server: a recursive schema (OpenAI's UI tree) gets a finite answer it accepts") {
    MockServer server;
    server.start();
    const std::string ui_tree =
        R"({"type":"object","properties":{)"
        R"("type":{"type":"string","enum":["div","button","header","section","field","form"]},)"
        R"("label":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}},)"
        R"("attributes":{"type":"array","items":{"type":"object","properties":{)"
        R"("name":{"type":"string"},"value":{"type":"string"}},"required":["name","value"],)"
        R"("additionalProperties":false}}},"required":["type","label","children","attributes"],)"
        R"("additionalProperties":false})";
    // A linked list whose next may be null: the deep levels take the null.
    const std::string list =
        R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},)"
        R"("next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},)"
        R"("$ref":"#/$defs/node"})";
    for (const std::string& schema : {ui_tree, list}) {
        nous::llm::ChatRequest request;
        request.base_url = server.base_url() + "/v1";
        request.model = "m";
        request.messages = {nous::llm::ChatMessage::user("a form")};
        nous::llm::ResponseFormat format;
        format.schema = schema;
        format.strict = false;
        request.response_format = format;
        for (bool stream : {true, false}) {
            request.stream = stream;
            auto r = nous::llm::run_chat(request);
            REQUIRE(r);
            INFO(r->text);
            CHECK_FALSE(r->output_error);
            REQUIRE(r->parsed);
            CHECK(!nous::llm::validate_against_schema(*r->parsed, schema));
        }
    }
    require_serving(server);
}

TEST_CASE("mock server: --record writes each chat and embeddings body down, named by its kind") {
    char dir_template[] = "/tmp/nous-record-XXXXXX";
    REQUIRE(::mkdtemp(dir_template));
    const std::string dir = dir_template;
    MockServerOptions o;
    o.record_dir = dir;
    MockServer server(o);
    server.start();
    const std::string chat = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    REQUIRE(post(server.base_url() + "/v1/chat/completions", chat).ok());
    REQUIRE(post(server.base_url() + "/v1/messages",
                 R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})",
                 {{"anthropic-version", "2026-10-21"}})
                .ok());
    REQUIRE(post(server.base_url() + "/v1/embeddings", R"({"model":"e","input":"t"})").ok());
    REQUIRE(post(server.base_url() + "/small", "{}").ok());  // not a provider route: not recorded
    server.stop();
    const auto read = [&](const std::string& name) {
        std::ifstream in(dir + "/" + name);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    CHECK(read("000001.openai-chat.json") == chat);
    CHECK(read("000002.anthropic@2026-10-21.json").find("\"max_tokens\":5") != std::string::npos);
    CHECK(read("000003.openai-embeddings.json") == R"({"model":"e","input":"t"})");
    CHECK(read("000004.openai-chat.json").empty());
    std::filesystem::remove_all(dir);
}
