// Bedrock: the Converse request (turns, tool results, images as bytes,
// system, inferenceConfig, toolConfig with every tool_choice, outputConfig
// with the schema as a string and the effort), what is refused before a
// byte goes out, the URL with the model id encoded, SigV4 or a bearer, and
// streamed and whole calls against the mock (text, tools, reasoning,
// structured output, a mid-stream exception, a stream without messageStop,
// Bedrock's error shape).

#include <rapidjson/pointer.h>
#include <rapidjson/writer.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>

#include "chat_body.hpp"
#include "nous/llm/aws_sigv4.hpp"
#include "nous/llm/count_tokens.hpp"
#include "nous/llm/router.hpp"
#include "nous/llm/run_chat.hpp"
#include "nous/llm/telemetry.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockServer;
using nous::test::body_of;

namespace {

std::string at(const rapidjson::Value& root, const char* pointer) {
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(root);
    if (!v) return "<absent>";
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v->Accept(w);
    return buffer.GetString();
}

std::string header(const Headers& headers, std::string_view name) {
    for (const auto& [n, v] : headers)
        if (nous::http::header_name_equals(n, name)) return v;
    return "<none>";
}

/// The AWS environment of one test: keys and a region, nothing else.
struct AwsEnv {
    AwsEnv(bool keys = true, bool region = true) {
        for (const char* name :
             {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
              "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE"})
            ::unsetenv(name);
        ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
        // No cloud metadata here: the chain ends at the credentials file.
        ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
        ::unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        ::unsetenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
        if (keys) {
            ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
            ::setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
        }
        if (region) ::setenv("AWS_REGION", "us-west-2", 1);
    }
    ~AwsEnv() {
        for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                                 "AWS_SHARED_CREDENTIALS_FILE"})
            ::unsetenv(name);
    }
};

constexpr const char* kModel = "anthropic.claude-3-5-sonnet-20240620-v1:0";

ChatRequest bedrock(std::string base = "") {
    ChatRequest r;
    r.provider = Provider::bedrock;
    r.base_url = std::move(base);
    r.model = kModel;
    r.messages.push_back(ChatMessage::user("What is the weather?"));
    return r;
}

}  // namespace

TEST_CASE(
    "bedrock: the URL with the model id encoded, SigV4 with the region, no model in the body") {
    AwsEnv env;
    ChatRequest r = bedrock();
    auto call = build_chat_call(r);
    REQUIRE(call);
    CHECK(call->url ==
          "https://bedrock-runtime.us-west-2.amazonaws.com/model/"
          "anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream");
    const std::string auth = header(call->headers, "authorization");
    CHECK(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
    CHECK(auth.find("/us-west-2/bedrock/aws4_request") != std::string::npos);
    CHECK(auth.find("SignedHeaders=content-type;host;x-amz-date") != std::string::npos);
    CHECK(header(call->headers, "host") == "bedrock-runtime.us-west-2.amazonaws.com");
    CHECK(header(call->headers, "x-amz-date") != "<none>");
    for (const auto& [name, value] : call->headers)
        CHECK(value.find("wJalrXUtnFEMI") == std::string::npos);  // the secret never goes out
    auto doc = nous::http::parse_json(call->body);
    REQUIRE(doc);
    CHECK(at(*doc.value(), "/model") == "<absent>");
    r.stream = false;
    r.region = "eu-central-1";
    CHECK(
        build_chat_call(r)->url.ends_with("eu-central-1.amazonaws.com/model/"
                                          "anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"));
    // A Bedrock API key goes as a bearer, and nothing is signed.
    r.api_key = "bedrock-api-key";
    auto bearer = build_chat_call(r);
    REQUIRE(bearer);
    CHECK(header(bearer->headers, "authorization") == "Bearer bedrock-api-key");
    CHECK(header(bearer->headers, "x-amz-date") == "<none>");
    CHECK(otel_provider_name(Provider::bedrock) == "aws.bedrock");
    CHECK(provider_from_name("bedrock") == Provider::bedrock);
}

TEST_CASE("bedrock: no region, no credentials: refused naming the variables") {
    {
        AwsEnv env(true, false);
        auto no_region = build_chat_call(bedrock());
        REQUIRE_FALSE(no_region);
        CHECK(no_region.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(no_region.error().message, Catch::Contains("AWS_REGION"));
    }
    {
        AwsEnv env(false, true);
        auto no_keys = build_chat_call(bedrock());
        REQUIRE_FALSE(no_keys);
        CHECK_THAT(no_keys.error().message, Catch::Contains("AWS_BEARER_TOKEN_BEDROCK"));
        CHECK_THAT(no_keys.error().message, Catch::Contains("AWS_ACCESS_KEY_ID"));
    }
}

TEST_CASE("bedrock: redacted reasoning comes back whole and goes back as it came") {
    auto whole = parse_chat_response(
        Provider::bedrock,
        R"({"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"redactedContent":"UkVE"}},)"
        R"({"toolUse":{"toolUseId":"tu_1","name":"f","input":{}}}]}},"stopReason":"tool_use",)"
        R"("usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}})");
    REQUIRE(whole.ok());
    CHECK(whole->reasoning.redacted == std::vector<std::string>{"UkVE"});
    DeltaParser parser(Provider::bedrock);
    std::vector<Delta> deltas;
    nous::http::Event event;
    event.type = "contentBlockDelta";
    event.data =
        R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"UkVE"}}})";
    REQUIRE_FALSE(parser.parse(event, deltas));
    REQUIRE(deltas.size() == 1);
    CHECK(deltas[0].reasoning_redacted == "UkVE");
    AwsEnv env;
    ChatRequest r = bedrock();
    r.tools = {ToolSpec{"f", "", R"({"type":"object"})"}};  // Converse needs them beside the blocks
    ChatMessage call_turn("assistant", "");
    call_turn.tool_calls = {ToolCall{"tu_1", "f", "{}", ""}};
    call_turn.reasoning = whole->reasoning;
    r.messages.push_back(call_turn);
    r.messages.push_back(ChatMessage::tool_result("tu_1", "ok"));
    CHECK(
        at(*body_of(r), "/messages/1") ==
        R"({"role":"assistant","content":[{"reasoningContent":{"redactedContent":"UkVE"}},{"toolUse":{"toolUseId":"tu_1","name":"f","input":{}}}]})");
}

TEST_CASE("bedrock: the Converse body, turn by turn, and every tool_choice") {
    AwsEnv env;
    ChatRequest r = bedrock();
    r.system = "Be brief.";
    r.max_tokens = 300;
    r.temperature = 0.5;
    r.top_p = 0.9;
    r.stop = {"END"};
    r.tools = {ToolSpec{"get_weather", "Weather of a city",
                        R"({"type":"object","properties":{"city":{"type":"string"}}})"}};
    ChatMessage call_turn("assistant", "");
    call_turn.tool_calls = {ToolCall{"tu_1", "get_weather", R"({"city":"Paris"})", ""}};
    call_turn.reasoning = Reasoning{"Let me look.", "sig-1", "", {}};
    r.messages.push_back(call_turn);
    r.messages.push_back(ChatMessage::tool_result("tu_1", "sunny"));
    r.messages.push_back(
        ChatMessage::user("And this?", {ContentPart::image("data:image/png;base64,iVBORw0KGgo=")}));
    auto doc = body_of(r);
    CHECK(at(*doc, "/system") == R"([{"text":"Be brief."}])");
    CHECK(at(*doc, "/inferenceConfig") ==
          R"({"maxTokens":300,"temperature":0.5,"topP":0.9,"stopSequences":["END"]})");
    CHECK(at(*doc, "/messages/0") ==
          R"({"role":"user","content":[{"text":"What is the weather?"}]})");
    CHECK(
        at(*doc, "/messages/1") ==
        R"({"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Let me look.","signature":"sig-1"}}},{"toolUse":{"toolUseId":"tu_1","name":"get_weather","input":{"city":"Paris"}}}]})");
    // The tool's result and the user's next words are one user turn.
    CHECK(
        at(*doc, "/messages/2") ==
        R"({"role":"user","content":[{"toolResult":{"toolUseId":"tu_1","content":[{"text":"sunny"}]}},{"text":"And this?"},{"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}}]})");
    CHECK(
        at(*doc, "/toolConfig/tools") ==
        R"([{"toolSpec":{"name":"get_weather","description":"Weather of a city","inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"}}}}}}])");
    CHECK(at(*doc, "/toolConfig/toolChoice") == "<absent>");
    r.tool_choice = ToolChoice::from_name("auto");
    CHECK(at(*body_of(r), "/toolConfig/toolChoice") == R"({"auto":{}})");
    r.tool_choice = ToolChoice::from_name("required");
    CHECK(at(*body_of(r), "/toolConfig/toolChoice") == R"({"any":{}})");
    r.tool_choice = ToolChoice::from_name("get_weather");
    CHECK(at(*body_of(r), "/toolConfig/toolChoice") == R"({"tool":{"name":"get_weather"}})");
    // tool_choice none: the tools are left out, which a conversation with tool blocks cannot be.
    r.tool_choice = ToolChoice::from_name("none");
    auto none = build_chat_call(r);
    REQUIRE_FALSE(none);
    CHECK(none.error().code == ErrorCode::invalid_argument);
    ChatRequest fresh = bedrock();
    fresh.tools = r.tools;
    fresh.tool_choice = ToolChoice::from_name("none");
    CHECK(at(*body_of(fresh), "/toolConfig") == "<absent>");
    // Nor can a conversation with tool blocks go without its tools (a
    // summary's call replaying them): Converse refuses blocks without a
    // toolConfig.
    r.tool_choice.reset();
    r.tools.clear();
    auto no_tools = build_chat_call(r);
    REQUIRE_FALSE(no_tools);
    CHECK(no_tools.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(no_tools.error().message,
               Catch::Contains("tool calls or results in the conversation without tools"));
    // A system message's text parts join the system prompt; an image there
    // has no place in Converse's system blocks, and is refused.
    ChatRequest parts = bedrock();
    ChatMessage system("system", "");
    system.parts = {ContentPart::text_part("Be brief.")};
    parts.messages.insert(parts.messages.begin(), system);
    CHECK(at(*body_of(parts), "/system") == R"([{"text":"Be brief."}])");
    parts.messages.front().parts.push_back(ContentPart::image_data("image/png", "iVBORw0KGgo="));
    auto system_image = build_chat_call(parts);
    REQUIRE_FALSE(system_image);
    CHECK(system_image.error().message ==
          "message 0: bedrock takes no image in a system message (refused before sending, never "
          "dropped)");
}

TEST_CASE("bedrock: the schema as a string, the effort, and what Converse does not take") {
    AwsEnv env;
    ChatRequest r = bedrock();
    r.response_format = ResponseFormat{
        ResponseFormat::Kind::json_schema, "weather",
        R"({"type":"object","properties":{"c":{"type":"string"}},"required":["c"],"additionalProperties":false})",
        true};
    r.reasoning_effort = ReasoningEffort::high;
    auto doc = body_of(r);
    CHECK(at(*doc, "/outputConfig/textFormat/type") == R"("json_schema")");
    CHECK(at(*doc, "/outputConfig/textFormat/structure/jsonSchema/name") == R"("weather")");
    CHECK(
        at(*doc, "/outputConfig/textFormat/structure/jsonSchema/schema") ==
        R"("{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"string\"}},\"required\":[\"c\"],\"additionalProperties\":false}")");
    CHECK(at(*doc, "/outputConfig/effort") == R"("high")");

    auto refused = [](ChatRequest request, const char* says) {
        auto call = build_chat_call(request);
        INFO(says);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(call.error().message, Catch::Contains(says));
    };
    ChatRequest seeded = bedrock();
    seeded.seed = 7;
    refused(seeded, "seed");
    ChatRequest by_url = bedrock();
    by_url.messages.back().parts = {ContentPart::image("https://example.com/cat.png")};
    refused(by_url, "by URL");
    ChatRequest bmp = bedrock();
    bmp.messages.back().parts = {ContentPart::image_data("image/bmp", "Qk0=")};
    refused(bmp, "image/bmp");
    ChatRequest plain_json = bedrock();
    plain_json.response_format = ResponseFormat{ResponseFormat::Kind::json_object, "r", "", false};
    refused(plain_json, "json_object");
    ChatRequest parallel = bedrock();
    parallel.parallel_tool_calls = false;
    refused(parallel, "parallel_tool_calls");
    // The service model's bounds: a temperature from 0 to 1, stop sequences not empty.
    ChatRequest hot = bedrock();
    hot.temperature = 1;
    CHECK(build_chat_call(hot));
    hot.temperature = 1.5;
    refused(hot, "temperature 1.5 is not taken by bedrock: it takes 0 to 1");
    ChatRequest empty_stop = bedrock();
    empty_stop.stop = {""};
    refused(empty_stop, "stop sequence 0 is empty");
    // "The content field in the Message object at messages.N is empty": any
    // turn, the last assistant one too.
    // Converse's ToolUseId is [a-zA-Z0-9_.:-]{1,64}: another provider's id
    // that breaks it goes as "call_" and its hash, on the call and the result.
    ChatRequest foreign = bedrock();
    foreign.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
    foreign.messages.push_back(
        ChatMessage::assistant("", {ToolCall{"call 1/x", "get_time", "{}", ""}}));
    foreign.messages.push_back(ChatMessage::tool_result("call 1/x", "noon"));
    auto ids = body_of(foreign);
    const std::string use = at(*ids, "/messages/1/content/0/toolUse/toolUseId");
    CHECK(use == at(*ids, "/messages/2/content/0/toolResult/toolUseId"));
    CHECK(use.size() == 2 + 21);
    CHECK(use.starts_with("\"call_"));
    foreign.messages[1].tool_calls[0].id = foreign.messages[2].tool_call_id = "tools.get:0";
    CHECK(at(*body_of(foreign), "/messages/1/content/0/toolUse/toolUseId") == R"("tools.get:0")");
    // Claude on Bedrock takes a tool schema whose type is said: {} goes as {"type":"object"}.
    ChatRequest untyped = bedrock();
    untyped.tools.push_back({"get_time", "the time", "{}"});
    CHECK(at(*body_of(untyped), "/toolConfig/tools/0/toolSpec/inputSchema/json") ==
          R"({"type":"object"})");
    // "Expected toolResult blocks": a call needs its result in the turn after it.
    ChatRequest unanswered = bedrock();
    unanswered.tools.push_back({"get_time", "the time", R"({"type":"object"})"});
    unanswered.messages.push_back(
        ChatMessage::assistant("", {ToolCall{"c1", "get_time", "{}", ""}}));
    refused(unanswered, "message 1: tool call 'c1' has no result in the turn after it");
    ChatRequest empty_turn = bedrock();
    empty_turn.messages.push_back(ChatMessage::assistant(""));
    refused(empty_turn, "message 1 is empty: bedrock takes no turn without text");
}

TEST_CASE("bedrock against the mock: streamed and whole, tools, reasoning, structured output") {
    AwsEnv env;
    MockServer server;
    server.start();
    for (bool stream : {true, false}) {
        INFO((stream ? "streamed" : "whole"));
        ChatRequest r = bedrock(server.base_url());
        r.stream = stream;
        auto plain = run_chat(r);
        REQUIRE(plain);
        CHECK(plain->text ==
              "Hello from the nous-http mock server. Tokens arrive one by one as "
              "requested!");
        CHECK(plain->finish_reason == "end_turn");
        REQUIRE(plain->usage);
        CHECK(plain->usage->output_tokens == 16);
        CHECK(server.last_request().target ==
              std::string("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse") +
                  (stream ? "-stream" : ""));
        CHECK(server.last_request().header("authorization")->starts_with("AWS4-HMAC-SHA256"));

        r.tools = {ToolSpec{"get_weather", "", R"({"type":"object","properties":{}})"}};
        r.reasoning_effort = ReasoningEffort::low;
        auto tooled = run_chat(r);
        REQUIRE(tooled);
        REQUIRE(tooled->tool_calls.size() == 1);
        CHECK(tooled->tool_calls[0].name == "get_weather");
        // Streamed: the argument pieces as sent; whole: the input object, compact.
        CHECK(tooled->tool_calls[0].arguments == (stream ? R"({"city": "Paris", "unit": "celsius"})"
                                                         : R"({"city":"Paris","unit":"celsius"})"));
        CHECK(tooled->finish_reason == "tool_use");
        CHECK(tooled->reasoning.text == "Thinking about the answer.");
        CHECK(tooled->reasoning.signature == "mock-signature-1");

        ChatRequest structured = bedrock(server.base_url());
        structured.stream = stream;
        structured.response_format = ResponseFormat{
            ResponseFormat::Kind::json_schema, "r",
            R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false})",
            true};
        auto answer = run_chat(structured);
        REQUIRE(answer);
        REQUIRE(answer->parsed);
        CHECK_FALSE(answer->output_error);
    }
}

TEST_CASE(
    "bedrock's errors: its shape and type, a mid-stream exception, a stream without messageStop") {
    AwsEnv env;
    MockServer server;
    server.start();
    ChatRequest r = bedrock(server.base_url());
    r.stream = false;
    r.headers = {{"x-mock-fault", "server_error"}};
    nous::http::Options no_retry;
    no_retry.max_retries = 0;
    auto failed = run_chat(r, no_retry);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().status == 500);
    CHECK_THAT(failed.error().message, Catch::Contains("InternalServerException: The server"));

    ChatRequest streamed = bedrock(server.base_url());
    streamed.headers = {{"x-mock-fault", "midstream_error"}};
    auto broken = run_chat(streamed, no_retry);
    REQUIRE(broken);  // the text so far, and the stream's error (nouscli exits 6)
    REQUIRE(broken->stream_error);
    CHECK_THAT(*broken->stream_error, Catch::Contains("modelStreamErrorException"));
    CHECK_FALSE(broken->complete);

    // A stream whose body ends cleanly before messageStop is cut short.
    MockServer cut;
    cut.set_handler([](const nous::http::MockRequest&, nous::http::MockResponse& res) {
        res.headers = {{"Content-Type", "application/vnd.amazon.eventstream"}};
        res.body = nous::http::encode_aws_event_stream_message(
                       {{":event-type", "messageStart"}, {":message-type", "event"}},
                       R"({"role":"assistant"})") +
                   nous::http::encode_aws_event_stream_message(
                       {{":event-type", "contentBlockDelta"}, {":message-type", "event"}},
                       R"({"contentBlockIndex":0,"delta":{"text":"Hel"}})");
        return true;
    });
    cut.start();
    auto truncated = run_chat(bedrock(cut.base_url()), no_retry);
    REQUIRE_FALSE(truncated);
    CHECK(truncated.error().code == ErrorCode::truncated);
    CHECK_THAT(truncated.error().message, Catch::Contains("messageStop"));
}

TEST_CASE("the mock recomputes SigV4: the right secret passes, a wrong or stale one is AWS's 403") {
    AwsEnv env;  // signs with wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
    nous::http::MockServerOptions o;
    o.aws_secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    MockServer server(o);
    server.start();
    nous::http::Options no_retry;
    no_retry.max_retries = 0;
    for (bool stream : {true, false}) {
        ChatRequest r = bedrock(server.base_url());
        r.stream = stream;
        ::setenv("AWS_SESSION_TOKEN", "session-token", 1);  // signed too
        auto ok = run_chat(r, no_retry);
        ::unsetenv("AWS_SESSION_TOKEN");
        REQUIRE(ok);
        CHECK_FALSE(ok->text.empty());
    }
    ::setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
    ChatRequest r = bedrock(server.base_url());
    r.stream = false;
    auto wrong = run_chat(r, no_retry);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().status == 403);
    CHECK_THAT(wrong.error().message, Catch::Contains("InvalidSignatureException"));
    CHECK_THAT(wrong.error().message, !Catch::Contains("not-the-secret"));

    // Signed ten minutes ago: AWS's words for a clock that is off.
    SigV4Request stale;
    stale.method = "POST";
    stale.path = "/model/m/converse";
    const std::string host = server.base_url().substr(std::string("http://").size());
    stale.headers = {{"Host", host}, {"Content-Type", "application/json"}};
    const std::string body = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
    stale.body = body;
    sigv4_sign(stale, {"AKIDEXAMPLE", o.aws_secret, ""}, "us-east-1", "bedrock",
               std::time(nullptr) - 600);
    auto expired = nous::http::post(server.base_url() + stale.path, body, stale.headers, no_retry);
    REQUIRE_FALSE(expired);
    CHECK(expired.error().status == 403);
    CHECK_THAT(expired.error().body, Catch::Contains("Signature expired"));
    auto unsigned_call =
        nous::http::post(server.base_url() + "/model/m/converse", body, {}, no_retry);
    REQUIRE_FALSE(unsigned_call);
    CHECK_THAT(unsigned_call.error().body, Catch::Contains("Missing Authentication Token"));
}

TEST_CASE("a router fails over from OpenAI to Azure to Bedrock, each deployment its platform's") {
    AwsEnv env(true, false);
    ::setenv("ROUTER_OPENAI_KEY", "sk-1", 1);
    ::setenv("ROUTER_AZURE_KEY", "az-1", 1);
    MockServer server;
    server.start();
    nous::http::MockServerOptions refusing;
    refusing.fault = "server_error";  // every answer a 500: both go on to the next
    MockServer failing(refusing);
    failing.start();
    const std::string file =
        R"({"deployments":[
        {"name":"openai","provider":"openai","base_url":")" +
        failing.base_url() +
        R"(/v1","model":"gpt-4o","api_key_env":"ROUTER_OPENAI_KEY"},
        {"name":"azure","provider":"azure","base_url":")" +
        failing.base_url() +
        R"(/openai/deployments/d","model":"d","api_key_env":"ROUTER_AZURE_KEY","api_version":"2024-10-21","weight":0},
        {"name":"bedrock","provider":"bedrock","base_url":")" +
        server.base_url() + R"(","model":")" + kModel + R"(","region":"eu-west-1","weight":0}]})";
    auto config = router_config_from_json(file);
    REQUIRE(config);
    CHECK(config->deployments[2].region == "eu-west-1");
    CHECK(config->deployments[1].api_version == "2024-10-21");
    auto router = Router::create(std::move(config.value()));
    REQUIRE(router);
    ChatRequest r;
    r.messages.push_back(ChatMessage::user("hello"));
    r.stream = false;
    nous::http::Options no_retry;
    no_retry.max_retries = 0;
    RouteReport report;
    auto result = router.value()->chat(r, no_retry, {}, &report);
    REQUIRE(result);
    CHECK(report.deployment == "bedrock");
    CHECK(report.attempts.size() == 3);
    CHECK_FALSE(result->text.empty());
    // Signed for the deployment's region, not the (unset) environment's.
    CHECK(server.last_request().header("authorization")->find("/eu-west-1/bedrock/") !=
          std::string::npos);
    ::unsetenv("ROUTER_OPENAI_KEY");
    ::unsetenv("ROUTER_AZURE_KEY");
}

TEST_CASE("bedrock: cachePoint blocks where the breakpoints are, and count-tokens, signed") {
    AwsEnv env;
    ChatRequest r = bedrock();
    r.system = "Long instructions.";
    r.tools = {ToolSpec{"get_weather", "", R"({"type":"object","properties":{}})"}};
    r.cache = PromptCache{false, true, true, true, "1h"};
    auto doc = body_of(r);
    const std::string point = R"({"cachePoint":{"type":"default","ttl":"1h"}})";
    CHECK(at(*doc, "/system/1") == point);
    CHECK(at(*doc, "/toolConfig/tools/1") == point);
    CHECK(at(*doc, "/messages/0/content/1") == point);
    r.cache = PromptCache{true, false, false, false, ""};
    auto automatic = build_chat_call(r);
    REQUIRE_FALSE(automatic);
    CHECK_THAT(automatic.error().message, Catch::Contains("automatic prompt caching"));
    r.cache.reset();
    r.prompt_cache_key = "k";
    REQUIRE_FALSE(build_chat_call(r));

    nous::http::MockServerOptions o;
    o.aws_secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    MockServer server(o);
    server.start();
    ChatRequest counted = bedrock(server.base_url());
    counted.system = "Be brief.";
    counted.max_tokens = 99;
    auto n = count_tokens(counted);
    INFO((n ? std::string() : n.error().message));
    REQUIRE(n);
    CHECK(n.value() > 0);
    CHECK(server.last_request().target ==
          "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/count-tokens");
    auto body = nous::http::parse_json(server.last_request().body);
    REQUIRE(body);
    CHECK(at(*body.value(), "/input/converse/system") == R"([{"text":"Be brief."}])");
    CHECK(at(*body.value(), "/input/converse/inferenceConfig") == "<absent>");
}

TEST_CASE("the AWS chain's cloud sources: ECS/EKS container credentials and EC2's IMDSv2") {
    AwsEnv env(false, true);
    const std::string secret = "container-secret";
    nous::http::MockServerOptions o;
    o.aws_secret = secret;
    MockServer server(o);
    std::atomic<int> imds_token_asks{0};
    std::string seen_authorization;
    std::mutex seen;
    server.set_handler([&](const nous::http::MockRequest& req, nous::http::MockResponse& res) {
        const std::string creds =
            R"({"AccessKeyId":"ASIACLOUD","SecretAccessKey":")" + secret +
            R"(","Token":"cloud-session","Expiration":"2099-01-01T00:00:00Z"})";
        if (req.target == "/container-creds" && req.method == "GET") {
            std::lock_guard lock(seen);
            seen_authorization = req.header("authorization").value_or("");
            res.body = creds;
            return true;
        }
        if (req.target == "/latest/api/token" && req.method == "PUT") {
            ++imds_token_asks;
            res.body = "imds-session-token";
            return true;
        }
        if (req.target.rfind("/latest/meta-data/iam/security-credentials/", 0) == 0) {
            if (req.header("x-aws-ec2-metadata-token") !=
                std::optional<std::string>("imds-session-token")) {
                res.status = 401;
                return true;
            }
            res.body = req.target.ends_with("/") ? "role-1" : creds;
            return true;
        }
        return false;  // the model routes: the mock's own, checking SigV4 with `secret`
    });
    server.start();
    ChatRequest r = bedrock(server.base_url());
    r.stream = false;

    SECTION("container") {
        ::setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 (server.base_url() + "/container-creds").c_str(), 1);
        ::setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth", 1);
        auto result = run_chat(r);
        ::unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        ::unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
        INFO((result ? std::string() : result.error().message));
        REQUIRE(result);
        std::lock_guard lock(seen);
        CHECK(seen_authorization == "container-auth");
        CHECK(server.last_request().header("authorization")->find("Credential=ASIACLOUD/") !=
              std::string::npos);
        CHECK(server.last_request().header("x-amz-security-token") ==
              std::optional<std::string>("cloud-session"));
    }
    SECTION("IMDSv2") {
        ::unsetenv("AWS_EC2_METADATA_DISABLED");
        ::setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", server.base_url().c_str(), 1);
        auto first = run_chat(r);
        auto second = run_chat(r);
        ::unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
        ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
        INFO((first ? std::string() : first.error().message));
        REQUIRE(first);
        REQUIRE(second);
        CHECK(server.last_request().header("authorization")->find("Credential=ASIACLOUD/") !=
              std::string::npos);
        CHECK(imds_token_asks <= 1);  // kept until 5 minutes before they expire (2099)
    }
}

TEST_CASE("the AWS chain ends at a silent metadata endpoint: refused naming every source") {
    AwsEnv env(false, true);
    ::unsetenv("AWS_EC2_METADATA_DISABLED");
    MockServer refusing;  // answers 404 to the metadata paths
    refusing.start();
    ::setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", refusing.base_url().c_str(), 1);
    auto call = build_chat_call(bedrock());
    ::unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    REQUIRE_FALSE(call);
    CHECK(call.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(call.error().message, Catch::Contains("AWS_ACCESS_KEY_ID"));
    CHECK_THAT(call.error().message, Catch::Contains("container credentials"));
    CHECK_THAT(call.error().message, Catch::Contains("instance metadata"));
}
