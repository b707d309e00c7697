// Provider helpers: request builders, the Delta parsers of the three stream
// formats (golden fixtures written from each provider's documented stream
// format, run whole, byte by byte and at random splits), the accumulator,
// non-streamed responses, provider errors, and run_chat against the mock.

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "fault_server.hpp"
#include "json_scan_check.hpp"
#include "llm/json/event_json.hpp"
#include "nous/http/json.hpp"
#include "nous/http/testing.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/detail/delta_parser_access.hpp"
#include "nous/mock/mock_server.hpp"
#include "openai_chunk_check.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::Event;
using nous::http::MockServer;
using nous::http::MockServerOptions;

namespace {

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The SSE bytes, cut at `cuts`, through the SSE decoder, the provider's
/// DeltaParser and the Accumulator: to_json(message) + "\n" + stream error + "\n".
std::string run_fixture(Provider provider, std::string_view bytes,
                        const std::vector<std::size_t>& cuts) {
    auto sse = nous::http::make_sse_decoder();
    DeltaParser parser(provider);
    Accumulator accumulator;
    std::vector<Event> events;
    std::vector<Delta> deltas;
    std::size_t pos = 0;
    bool done = false;
    for (std::size_t i = 0; i <= cuts.size() && !done; ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : bytes.size();
        events.clear();
        auto e = sse->feed(bytes.substr(pos, end - pos), events, done);
        pos = end;
        REQUIRE_FALSE(e);
        for (const Event& event : events) {
            deltas.clear();
            auto malformed = parser.parse(event, deltas);
            REQUIRE_FALSE(malformed);
            for (const Delta& d : deltas) accumulator.add(d);
        }
    }
    ChatResult result = accumulator.result();
    return to_json(result) + "\n" + result.stream_error.value_or("") + "\n";
}

Provider provider_of(const std::string& name) {
    if (name.rfind("openai_responses", 0) == 0) return Provider::openai_responses;
    if (name.rfind("anthropic", 0) == 0) return Provider::anthropic;
    if (name.rfind("gemini", 0) == 0) return Provider::gemini;
    return Provider::openai;
}

}  // namespace

TEST_CASE(
    "provider stream fixtures assemble the same message whole, byte by byte and at random splits") {
    std::mt19937 rng(0x5eed);
    int fixtures = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(NOUS_FIXTURES) + "/llm")) {
        if (entry.path().extension() != ".sse") continue;
        const std::string name = entry.path().stem().string();
        CAPTURE(name);
        const std::string bytes = slurp(entry.path());
        auto expect_path = entry.path();
        expect_path.replace_extension(".expect");
        const Provider provider = provider_of(name);
        // A new fixture's expectation is written from its whole run, then
        // read and checked by hand (docs/design/testing.md).
        if (std::getenv("NOUS_WRITE_FIXTURE_EXPECTATIONS"))
            std::ofstream(expect_path, std::ios::binary) << run_fixture(provider, bytes, {});
        const std::string expected = slurp(expect_path);
        CHECK(run_fixture(provider, bytes, {}) == expected);
        std::vector<std::size_t> every;
        for (std::size_t i = 1; i < bytes.size(); ++i) every.push_back(i);
        CHECK(run_fixture(provider, bytes, every) == expected);
        for (int round = 0; round < 20; ++round) {
            std::vector<std::size_t> cuts;
            for (std::size_t i = 1; i < bytes.size(); ++i)
                if (rng() % 13 == 0) cuts.push_back(i);
            CHECK(run_fixture(provider, bytes, cuts) == expected);
        }
        ++fixtures;
    }
    CHECK(fixtures == 28);
}

TEST_CASE("the OpenAI builder's body is the documented request for the same chat") {
    // The chat completions reference's first example.
    ChatRequest request;
    request.model = "gpt-4o";
    request.system = "You are a helpful assistant.";
    request.messages = {{"user", "Hello!"}};
    request.stream = false;
    request.api_key = "sk-test";
    auto call = build_chat_call(request);
    REQUIRE(call.ok());
    CHECK(call->url == "https://api.openai.com/v1/chat/completions");
    auto ours = nous::http::parse_json(call->body);
    auto documented = nous::http::parse_json(R"({
        "model": "gpt-4o",
        "messages": [
          {"role": "system", "content": "You are a helpful assistant."},
          {"role": "user", "content": "Hello!"}
        ]
      })");
    REQUIRE(ours.ok());
    REQUIRE(documented.ok());
    CHECK(*ours.value() == *documented.value());
    CHECK(call->headers == nous::http::Headers{{"Content-Type", "application/json"},
                                               {"authorization", "Bearer sk-test"}});
}

TEST_CASE(
    "a streamed OpenAI request asks for usage, and tools, max tokens and temperature are written "
    "per provider") {
    ChatRequest request;
    request.model = "m";
    request.messages = {{"user", "hi"}, {"assistant", "hello"}, {"user", "weather?"}};
    request.max_tokens = 50;
    request.temperature = 0.5;
    request.tools.push_back({"get_weather", "The weather",
                             R"({"type":"object","properties":{"city":{"type":"string"}}})"});
    request.api_key = "k";

    auto openai = build_chat_call(request);
    REQUIRE(openai.ok());
    auto o = nous::http::parse_json(openai->body);
    REQUIRE(o.ok());
    const auto& ob = *o.value();
    CHECK(ob["stream"].GetBool());
    CHECK(ob["stream_options"]["include_usage"].GetBool());
    CHECK(ob["max_tokens"].GetInt() == 50);
    CHECK(ob["temperature"].GetDouble() == 0.5);
    CHECK(std::string(ob["tools"][0]["type"].GetString()) == "function");
    CHECK(std::string(ob["tools"][0]["function"]["name"].GetString()) == "get_weather");
    CHECK(ob["tools"][0]["function"]["parameters"]["properties"].HasMember("city"));

    request.provider = Provider::anthropic;
    request.system = "Be brief.";
    auto anthropic = build_chat_call(request);
    REQUIRE(anthropic.ok());
    CHECK(anthropic->url == "https://api.anthropic.com/v1/messages");
    CHECK(anthropic->headers == nous::http::Headers{{"Content-Type", "application/json"},
                                                    {"x-api-key", "k"},
                                                    {"anthropic-version", "2023-06-01"}});
    auto a = nous::http::parse_json(anthropic->body);
    REQUIRE(a.ok());
    const auto& ab = *a.value();
    CHECK(std::string(ab["system"].GetString()) == "Be brief.");
    CHECK(ab["max_tokens"].GetInt() == 50);
    CHECK(ab["messages"].Size() == 3);
    CHECK(std::string(ab["tools"][0]["name"].GetString()) == "get_weather");
    CHECK(ab["tools"][0].HasMember("input_schema"));

    request.max_tokens.reset();
    auto anthropic_default = build_chat_call(request);
    auto ad = nous::http::parse_json(anthropic_default->body);
    CHECK((*ad.value())["max_tokens"].GetInt() == 1024);  // the Messages API requires one

    request.provider = Provider::gemini;
    request.base_url = "http://127.0.0.1:9/v1beta/";
    auto gemini = build_chat_call(request);
    REQUIRE(gemini.ok());
    CHECK(gemini->url == "http://127.0.0.1:9/v1beta/models/m:streamGenerateContent?alt=sse");
    CHECK(gemini->headers[1] == std::pair<std::string, std::string>{"x-goog-api-key", "k"});
    auto g = nous::http::parse_json(gemini->body);
    REQUIRE(g.ok());
    const auto& gb = *g.value();
    CHECK(std::string(gb["contents"][1]["role"].GetString()) == "model");
    CHECK(std::string(gb["systemInstruction"]["parts"][0]["text"].GetString()) == "Be brief.");
    CHECK(gb["generationConfig"]["temperature"].GetDouble() == 0.5);
    CHECK(std::string(gb["tools"][0]["functionDeclarations"][0]["name"].GetString()) ==
          "get_weather");
    request.stream = false;
    CHECK(build_chat_call(request)->url == "http://127.0.0.1:9/v1beta/models/m:generateContent");
}

TEST_CASE(
    "a chat request without a model or with a schema that is not an object is invalid_argument") {
    ChatRequest request;
    auto none = build_chat_call(request);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().code == ErrorCode::invalid_argument);
    request.model = "m";
    request.tools.push_back({"t", "", "[1,2]"});
    auto bad = build_chat_call(request);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == ErrorCode::invalid_argument);
}

TEST_CASE("an event's depth limit is 256 levels, checked while parsing") {
    DeltaParser parser(Provider::gemini);  // takes arrays at the root
    std::vector<Delta> out;
    Event at_limit, past_limit;
    at_limit.data = std::string(256, '[') + std::string(256, ']');
    past_limit.data = std::string(257, '[') + std::string(257, ']');
    CHECK_FALSE(parser.parse(at_limit, out));
    auto e = parser.parse(past_limit, out);
    REQUIRE(e);
    CHECK_THAT(e->message, Catch::Contains("deeper than 256"));
}

TEST_CASE("the reused event document: a large event, then small ones, parse alike") {
    DeltaParser parser(Provider::openai);
    std::vector<Delta> out;
    Event big, small;
    const std::string text(100000, 'x');
    big.data = R"({"choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})";
    small.data = R"({"choices":[{"index":0,"delta":{"content":"ok"}}]})";
    for (int round = 0; round < 3; ++round) {
        out.clear();
        REQUIRE_FALSE(parser.parse(big, out));
        REQUIRE(out.size() == 1);
        CHECK(out[0].text == text);
        out.clear();
        REQUIRE_FALSE(parser.parse(small, out));
        REQUIRE(out.size() == 1);
        CHECK(out[0].text == "ok");
    }
}

TEST_CASE("a malformed or deeply nested provider event is an error value, never a throw") {
    for (Provider p :
         {Provider::openai, Provider::anthropic, Provider::gemini, Provider::openai_responses}) {
        DeltaParser parser(p);
        std::vector<Delta> out;
        Event bad;
        bad.data = "{not json";
        auto e = parser.parse(bad, out);
        REQUIRE(e);
        CHECK(e->code == ErrorCode::protocol);
        Event deep;
        deep.data = std::string(100000, '[');
        CHECK(parser.parse(deep, out));
        Event keepalive;
        keepalive.data = "";
        CHECK_FALSE(parser.parse(keepalive, out));
        CHECK(out.empty());
    }
}

TEST_CASE("an answer's text that is not UTF-8 is a protocol error naming the field and byte") {
    struct Case {
        Provider provider;
        const char* type;
        std::string data;
        const char* says;  ///< nullptr: UTF-8, read as usual
    };
    const std::string bad =
        "a\xff"
        "b";
    const std::vector<Case> cases = {
        {Provider::openai, "", R"({"choices":[{"index":0,"delta":{"content":")" + bad + R"("}}]})",
         "the text is not UTF-8 at byte 1"},
        {Provider::openai, "",
         R"({"choices":[{"index":0,"delta":{"content":")" + bad + R"("},"finish_reason":"stop"}]})",
         "the text is not UTF-8 at byte 1"},
        {Provider::openai, "",
         R"({"choices":[{"index":0,"delta":{"reasoning_content":"ok )" + bad + R"("}}]})",
         "the reasoning is not UTF-8 at byte 4"},
        {Provider::openai, "",
         R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":")" +
             bad + R"("}}]}}]})",
         "the tool arguments is not UTF-8 at byte 1"},
        // A character cut in two, and a surrogate written out as UTF-8 bytes.
        {Provider::anthropic, "content_block_delta",
         "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
         "\"text\":\"\xc3\"}}",
         "the text is not UTF-8 at byte 0"},
        {Provider::anthropic, "content_block_delta",
         "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
         "\"thinking\":\"x\xed\xa0\x80\"}}",
         "the reasoning is not UTF-8 at byte 1"},
        {Provider::gemini, "",
         R"({"candidates":[{"content":{"parts":[{"text":")" + bad +
             R"("}],"role":"model"},"index":0}]})",
         "the text is not UTF-8 at byte 1"},
        {Provider::openai_responses, "response.output_text.delta",
         R"({"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":")" +
             bad + R"(","sequence_number":4})",
         "the text is not UTF-8 at byte 1"},
        // UTF-8 of every length, and a field nobody reads, pass.
        {Provider::openai, "",
         "{\"model\":\"m\xff\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
         "\"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}}]}",
         nullptr},
    };
    for (const Case& c : cases) {
        for (const bool fast : {true, false}) {
            for (const bool three_arguments : {true, false}) {
                INFO(c.data << (fast ? " (fast paths)" : " (documents)")
                            << (three_arguments ? " (text handed back)" : ""));
                DeltaParser parser(c.provider);
                nous::llm::detail::DeltaParserAccess::use_fast_paths(parser, fast);
                nous::http::EventView view;
                view.type = c.type;
                view.data = c.data;
                std::vector<Delta> out;
                std::optional<std::string_view> text_only;
                auto e = three_arguments ? nous::llm::detail::DeltaParserAccess::parse(
                                               parser, view, out, text_only)
                                         : parser.parse(view, out);
                if (!c.says) {
                    CHECK_FALSE(e);
                    continue;
                }
                REQUIRE(e);
                CHECK(e->code == ErrorCode::protocol);
                CHECK(e->message == std::string("malformed provider event: ") + c.says);
            }
        }
    }
    // A whole answer: the message, a tool call's name.
    auto text = parse_chat_response(
        Provider::openai, R"({"choices":[{"index":0,"message":{"role":"assistant","content":")" +
                              bad + R"("},"finish_reason":"stop"}]})");
    REQUIRE_FALSE(text.ok());
    CHECK(text.error().code == ErrorCode::protocol);
    CHECK(text.error().message == "malformed provider event: the text is not UTF-8 at byte 1");
    auto name = parse_chat_response(
        Provider::anthropic,
        R"({"type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":")" +
            bad + R"(","input":{}}],"stop_reason":"tool_use"})");
    REQUIRE_FALSE(name.ok());
    CHECK(name.error().message == "malformed provider event: the tool name is not UTF-8 at byte 1");
}

TEST_CASE("non-streamed responses give the same message") {
    auto openai = parse_chat_response(
        Provider::openai, R"({"id":"x","choices":[{"index":0,"message":{"role":"assistant",
        "content":"Hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
        "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})");
    REQUIRE(openai.ok());
    CHECK(
        to_json(openai.value()) ==
        R"({"text":"Hi","tool_calls":[{"id":"call_1","name":"f","arguments":"{\"a\":1}"}],"finish_reason":"tool_calls","usage":{"input_tokens":3,"output_tokens":4,"cached_input_tokens":0,"cache_write_input_tokens":0,"reasoning_tokens":0},"reasoning":"","request_id":null,"rate_limit":null,"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}})");
    auto anthropic =
        parse_chat_response(Provider::anthropic, R"({"id":"msg","type":"message","role":"assistant",
        "content":[{"type":"text","text":"Sure."},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}],
        "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20,"cached_input_tokens":0,"reasoning_tokens":0},"request_id":null,"rate_limit":null})");
    REQUIRE(anthropic.ok());
    CHECK(
        to_json(anthropic.value()) ==
        R"({"text":"Sure.","tool_calls":[{"id":"toolu_1","name":"f","arguments":"{\"a\":1}"}],"finish_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"reasoning_tokens":0},"reasoning":"","request_id":null,"rate_limit":null,"message":{"role":"assistant","content":"Sure.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}})");
    auto gemini = parse_chat_response(Provider::gemini,
                                      R"({"candidates":[{"content":{"parts":[{"text":"Yes"}],
        "role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}})");
    REQUIRE(gemini.ok());
    CHECK(
        to_json(gemini.value()) ==
        R"({"text":"Yes","tool_calls":[],"finish_reason":"STOP","usage":{"input_tokens":1,"output_tokens":2,"cached_input_tokens":0,"cache_write_input_tokens":0,"reasoning_tokens":0},"reasoning":"","request_id":null,"rate_limit":null,"message":{"role":"assistant","content":"Yes"}})");
    auto not_json = parse_chat_response(Provider::openai, "<html>");
    REQUIRE_FALSE(not_json.ok());
    CHECK(not_json.error().code == ErrorCode::protocol);
}

TEST_CASE("whole responses carry reasoning and signatures, in every format") {
    auto anthropic = parse_chat_response(
        Provider::anthropic,
        R"({"type":"message","role":"assistant","content":[{"type":"thinking","thinking":"Plan.","signature":"SIG1"},)"
        R"({"type":"tool_use","id":"toolu_9","name":"f","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}})");
    REQUIRE(anthropic.ok());
    CHECK(anthropic->reasoning.text == "Plan.");
    CHECK(anthropic->reasoning.signature == "SIG1");
    auto deepseek = parse_chat_response(
        Provider::openai,
        R"({"choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"Think."},"finish_reason":"stop"}]})");
    REQUIRE(deepseek.ok());
    CHECK(deepseek->reasoning.text == "Think.");
    auto responses = parse_chat_response(
        Provider::openai_responses,
        R"({"id":"resp_1","object":"response","status":"completed","output":[)"
        R"({"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Sum."}],"encrypted_content":"ENC"},)"
        R"({"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]},)"
        R"({"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}],)"
        R"("usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":2},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":4}}})");
    INFO((responses.ok() ? std::string() : responses.error().message));
    REQUIRE(responses.ok());
    CHECK(responses->text == "Hello");
    CHECK(responses->reasoning.text == "Sum.");
    CHECK(responses->reasoning.signature == "ENC");
    CHECK(responses->reasoning.id == "rs_1");
    REQUIRE(responses->tool_calls.size() == 1);
    CHECK(responses->tool_calls[0].id == "call_1");
    CHECK(responses->tool_calls[0].arguments == R"({"a":1})");
    CHECK(responses->finish_reason == std::optional<std::string>("completed"));
    REQUIRE(responses->usage);
    CHECK(responses->usage->cached_input_tokens == 2);
    CHECK(responses->usage->reasoning_tokens == 4);
}

TEST_CASE("Anthropic's redacted thinking comes back whole and goes back as it came") {
    // With thinking on, a tool turn whose thinking was redacted must be sent
    // back with its redacted_thinking block: the API refuses the turn without it.
    auto whole = parse_chat_response(
        Provider::anthropic,
        R"({"type":"message","role":"assistant","content":[{"type":"thinking","thinking":"Plan.","signature":"SIG1"},)"
        R"({"type":"redacted_thinking","data":"RED1"},{"type":"redacted_thinking","data":"RED2"},)"
        R"({"type":"tool_use","id":"toolu_9","name":"f","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}})");
    REQUIRE(whole.ok());
    CHECK(whole->reasoning.signature == "SIG1");
    CHECK(whole->reasoning.redacted == std::vector<std::string>{"RED1", "RED2"});
    // Streamed: the block's data arrives whole in its content_block_start.
    DeltaParser parser(Provider::anthropic);
    Accumulator accumulator;
    std::vector<Delta> deltas;
    for (
        const char* data :
        {R"({"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"RED1"}})",
         R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})",
         R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}})"}) {
        deltas.clear();
        Event event;
        event.type = "content_block_start";
        event.data = data;
        REQUIRE_FALSE(parser.parse(event, deltas));
        for (const Delta& d : deltas) accumulator.add(d);
    }
    const ChatResult streamed = accumulator.result();
    CHECK(streamed.text == "hi");
    CHECK(streamed.reasoning.redacted == std::vector<std::string>{"RED1"});
    // Through the --messages JSON and into the next request, in order after the thinking block.
    auto back = messages_from_json("[" + message_to_json(whole->message()) + "]");
    REQUIRE(back.ok());
    REQUIRE(back->size() == 1);
    CHECK(back->front().reasoning.redacted == std::vector<std::string>{"RED1", "RED2"});
    ChatRequest next;
    next.provider = Provider::anthropic;
    next.model = "m";
    next.reasoning_effort = ReasoningEffort::low;
    next.messages = {ChatMessage::user("hi"), back->front(),
                     ChatMessage::tool_result("toolu_9", "ok")};
    auto call = build_chat_call(next);
    REQUIRE(call.ok());
    auto doc = nous::http::parse_json(call->body);
    REQUIRE(doc.ok());
    const auto& turn = (*doc.value())["messages"][1]["content"];
    REQUIRE(turn.Size() == 4);
    CHECK(std::string(turn[0]["type"].GetString()) == "thinking");
    CHECK(std::string(turn[1]["type"].GetString()) == "redacted_thinking");
    CHECK(std::string(turn[1]["data"].GetString()) == "RED1");
    CHECK(std::string(turn[2]["data"].GetString()) == "RED2");
    CHECK(std::string(turn[3]["type"].GetString()) == "tool_use");
    auto bad =
        messages_from_json(R"([{"role":"assistant","content":"x","reasoning":{"redacted":[1]}}])");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("redacted"));
}

TEST_CASE("a prompt Gemini blocked ends the message with its block reason, streamed or whole") {
    // No candidate at all: without the block reason it read as a stream cut short.
    const std::string blocked =
        R"({"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","safetyRatings":[]},)"
        R"("usageMetadata":{"promptTokenCount":3,"totalTokenCount":3}})";
    DeltaParser parser(Provider::gemini);
    std::vector<Delta> deltas;
    Event event;
    event.data = blocked;
    REQUIRE_FALSE(parser.parse(event, deltas));
    REQUIRE(deltas.size() == 1);
    CHECK(deltas[0].finish_reason == std::optional<std::string>("PROHIBITED_CONTENT"));
    CHECK(deltas[0].end_of_message);
    CHECK(deltas[0].input_tokens == std::optional<std::int64_t>(3));
    auto whole = parse_chat_response(Provider::gemini, blocked);
    REQUIRE(whole.ok());
    CHECK(whole->text.empty());
    CHECK(whole->finish_reason == std::optional<std::string>("PROHIBITED_CONTENT"));
    // Feedback without a block reason ends nothing.
    deltas.clear();
    event.data =
        R"({"promptFeedback":{"safetyRatings":[]},"candidates":[{"content":{"parts":[{"text":"hi"}]}}]})";
    REQUIRE_FALSE(parser.parse(event, deltas));
    REQUIRE(deltas.size() == 1);
    CHECK(deltas[0].text == "hi");
    CHECK_FALSE(deltas[0].end_of_message);
}

TEST_CASE("provider error bodies become the provider's own words") {
    auto make = [](int status, std::string body) {
        nous::http::Error e(ErrorCode::http_status, "HTTP " + std::to_string(status));
        e.status = status;
        e.body = std::move(body);
        return e;
    };
    CHECK(
        provider_error(
            Provider::openai,
            make(
                401,
                R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}})"))
            .message == "HTTP 401: Incorrect API key provided (invalid_request_error)");
    CHECK(
        provider_error(
            Provider::anthropic,
            make(529,
                 R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"))
            .message == "HTTP 529: Overloaded (overloaded_error)");
    CHECK(provider_error(Provider::gemini,
                         make(400, R"([{"error":{"code":400,"message":"API key not valid.",
        "status":"INVALID_ARGUMENT"}}])"))
              .message == "HTTP 400: API key not valid. (INVALID_ARGUMENT)");
    // Not JSON: the generic message stays, the body is kept.
    auto html = provider_error(Provider::openai, make(502, "<html>bad gateway</html>"));
    CHECK(html.message == "HTTP 502");
    CHECK(html.body == "<html>bad gateway</html>");
    CHECK(html.code == ErrorCode::http_status);
}

TEST_CASE(
    "run_chat against the mock server: text, a tool call and usage in all three formats, streamed "
    "and not") {
    MockServerOptions o;
    o.stream_tokens = 5;
    MockServer server(o);
    server.start();
    for (Provider p : {Provider::openai, Provider::anthropic, Provider::gemini}) {
        for (bool stream : {true, false}) {
            CAPTURE(to_string(p), stream);
            ChatRequest request;
            request.provider = p;
            request.base_url = server.base_url() + (p == Provider::gemini ? "/v1beta" : "/v1");
            request.api_key = "k";
            request.model = "mock-model";
            request.messages = {{"user", "weather in Paris?"}};
            request.stream = stream;
            request.tools.push_back(
                {"get_weather", "",
                 R"({"type":"object","properties":{"city":{"type":"string"}}})"});
            std::string streamed_text;
            nous::http::Options options;
            options.max_retries = 0;
            auto result = run_chat(request, options, [&](const Delta& d) {
                streamed_text += d.text;
                return true;
            });
            REQUIRE(result.ok());
            CHECK(result->text == "Hello from the nous-http");
            CHECK(streamed_text == result->text);
            REQUIRE(result->tool_calls.size() == 1);
            CHECK(result->tool_calls[0].name == "get_weather");
            auto args = nous::http::parse_json(result->tool_calls[0].arguments);
            REQUIRE(args.ok());
            CHECK(std::string((*args.value())["city"].GetString()) == "Paris");
            REQUIRE(result->usage);
            CHECK(result->usage->output_tokens > 0);
            CHECK(result->finish_reason);
        }
    }
}

TEST_CASE(
    "run_chat: a 4xx is http_status with the provider's message, an in-stream error ends the "
    "stream") {
    MockServer server;
    server.set_handler([](const nous::http::MockRequest& req, nous::http::MockResponse& res) {
        if (req.target == "/v1/messages") {
            res.status = 401;
            res.body =
                R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})";
        } else {
            res.headers.emplace_back("Content-Type", "text/event-stream");
            res.body =
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Par\"}}]}\n\n"
                "data: {\"error\":{\"message\":\"upstream died\"}}\n\n"
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"NOT SEEN\"}}]}\n\n";
        }
        return true;
    });
    server.start();
    ChatRequest request;
    request.provider = Provider::anthropic;
    request.base_url = server.base_url() + "/v1";
    request.model = "m";
    request.messages = {{"user", "hi"}};
    nous::http::Options options;
    options.max_retries = 0;
    auto denied = run_chat(request, options);
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.error().code == ErrorCode::http_status);
    CHECK(denied.error().status == 401);
    CHECK(denied.error().message == "HTTP 401: invalid x-api-key (authentication_error)");
    request.provider = Provider::openai;
    auto broken = run_chat(request, options);
    REQUIRE(broken.ok());
    CHECK(broken->text == "Par");
    CHECK(broken->stream_error == std::optional<std::string>("upstream died"));
}

TEST_CASE(
    "run_chat: a callback that returns false stops the stream, with the text so far and no error") {
    MockServerOptions o;
    o.stream_tokens = 5;
    MockServer server(o);
    server.start();
    for (Provider p :
         {Provider::openai, Provider::anthropic, Provider::gemini, Provider::openai_responses}) {
        for (const char* backend : {"pull", "window"}) {
            CAPTURE(to_string(p), backend);
            ChatRequest request;
            request.provider = p;
            request.base_url = server.base_url() + (p == Provider::gemini ? "/v1beta" : "/v1");
            request.model = "mock-model";
            request.messages = {{"user", "hi"}};
            nous::http::Options options;
            options.max_retries = 0;
            options.stream_backend = backend;
            int calls = 0;
            std::string seen;
            auto result = run_chat(request, options, [&](const Delta& d) {
                ++calls;
                seen += d.text;
                return seen.empty();  // stop at the first text
            });
            // Stopped by its caller, the message is what came: not a truncated error,
            // not complete, and nothing was delivered after the stop.
            REQUIRE(result.ok());
            CHECK(calls >= 1);
            CHECK_FALSE(seen.empty());
            CHECK(result->text == seen);
            CHECK(result->text != "Hello from the nous-http");
            CHECK_FALSE(result->complete);
            CHECK(result->request_id.rfind("req_mock_", 0) == 0);  // the response's headers too
        }
    }
}

TEST_CASE(
    "regression: tool-call assembly was quadratic, 200,000 calls in one event are assembled "
    "whole") {
    // One chunk with 200,000 tool-call starts, then one argument piece each,
    // in reverse order: every lookup is of a call far from the last one.
    constexpr int calls = 200'000;
    std::string first = R"({"choices":[{"index":0,"delta":{"tool_calls":[)";
    std::string second = first;
    for (int i = 0; i < calls; ++i) {
        if (i > 0) first += ',';
        first += R"({"index":)" + std::to_string(i) + R"(,"id":"c)" + std::to_string(i) +
                 R"(","function":{"name":"f","arguments":""}})";
        if (i > 0) second += ',';
        second +=
            R"({"index":)" + std::to_string(calls - 1 - i) + R"(,"function":{"arguments":"{}"}})";
    }
    first += "]}}]}";
    second += "]}}]}";
    DeltaParser parser(Provider::openai);
    Accumulator accumulator;
    for (const std::string* data : {&first, &second}) {
        Event event;
        event.data = *data;
        std::vector<Delta> deltas;
        REQUIRE_FALSE(parser.parse(event, deltas));
        for (const Delta& d : deltas) accumulator.add(d);
    }
    const ChatResult result = accumulator.result();
    REQUIRE(result.tool_calls.size() == calls);
    CHECK(result.tool_calls.front().id == "c0");
    CHECK(result.tool_calls.back().id == "c" + std::to_string(calls - 1));
    for (const auto& call : result.tool_calls) REQUIRE(call.arguments == "{}");
}

TEST_CASE("a non-streamed OpenAI response with n > 1 choices is the first choice only") {
    auto result = parse_chat_response(Provider::openai, R"({"choices":[
        {"index":1,"message":{"role":"assistant","content":"Bonjour"},"finish_reason":"length"},
        {"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}]})");
    REQUIRE(result.ok());
    CHECK(result->text == "Hello");
    CHECK(result->finish_reason == std::optional<std::string>("stop"));
}

TEST_CASE("a server that does not stream: its whole answer is the result, its error in its words") {
    // Some OpenAI-compatible servers answer "stream": true with one JSON document.
    const std::string backend = GENERATE("window", "pull");
    std::string body;
    nous::test::FaultServer server([&body](nous::test::Peer& peer, std::uint64_t) {
        while (peer.read_request())
            peer.send(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: w1\r\n"
                "Content-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
    });
    nous::http::Options options;
    options.stream_backend = backend;
    options.max_retries = 0;
    ChatRequest request;
    request.base_url = server.url("/v1");
    request.model = "m";
    request.messages = {{"user", "hi"}};
    REQUIRE(request.stream);
    body = R"({"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,)"
           R"("message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}],)"
           R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";
    std::vector<std::string> deltas;
    auto result = run_chat(request, options, [&](const Delta& d) {
        deltas.push_back(d.text);
        return true;
    });
    REQUIRE(result.ok());
    CHECK(result->text == "whole");
    CHECK(result->complete);
    CHECK(result->finish_reason == std::optional<std::string>("stop"));
    REQUIRE(result->usage);
    CHECK(result->usage->output_tokens == 1);
    CHECK(result->request_id == "w1");
    CHECK(deltas == std::vector<std::string>{"whole"});
    // An error object with a 200: the provider's words, still an error.
    body = R"({"error":{"message":"model m is overloaded","type":"server_error"}})";
    auto failed = run_chat(request, options, [](const Delta&) { return true; });
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().code == ErrorCode::protocol);
    CHECK_THAT(failed.error().message,
               Catch::Contains("did not stream") && Catch::Contains("model m is overloaded"));
    CHECK(failed.error().body == body);
    // JSON that is no answer at all stays the HTTP layer's error.
    body = R"([1,2,3])";
    auto odd = run_chat(request, options, [](const Delta&) { return true; });
    REQUIRE_FALSE(odd.ok());
    CHECK(odd.error().code == ErrorCode::protocol);
    CHECK_THAT(odd.error().message, Catch::Contains("did not stream"));
}

TEST_CASE("regression: run_chat with stream = true ignored Options::cancel") {
    const std::string backend = GENERATE("window", "pull");
    nous::test::FaultServer server([](nous::test::Peer& peer, std::uint64_t) {
        if (!peer.read_request()) return;
        peer.send(nous::test::kSseHead +
                  nous::test::chunk(R"(data: {"choices":[{"index":0,"delta":{"content":"Par"}}]})"
                                    "\n\n"));
        peer.stall();
    });
    nous::http::CancelToken token;
    nous::http::Options options;
    options.stream_backend = backend;
    options.cancel = &token;
    options.max_retries = 0;
    options.read_timeout = std::chrono::seconds(120);  // only the cancel can end it in time
    ChatRequest request;
    request.base_url = server.url("/v1");
    request.model = "m";
    request.messages = {{"user", "hi"}};
    std::atomic<bool> first_delta{false};
    std::thread canceller([&] {
        nous::test::wait_until([&] { return first_delta.load(); });
        token.cancel();
    });
    auto result = run_chat(request, options, [&](const Delta& d) {
        if (d.text == "Par") first_delta = true;
        return true;
    });
    canceller.join();
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::cancelled);
}

TEST_CASE("rate-limit headers: OpenAI's documented example, Anthropic's, retry-after, and none") {
    using namespace std::chrono;
    const auto now = system_clock::from_time_t(1'700'000'000);
    // OpenAI's rate-limits guide, "Rate limits in headers".
    auto openai = parse_rate_limit({{"x-ratelimit-limit-requests", "60"},
                                    {"x-ratelimit-limit-tokens", "150000"},
                                    {"x-ratelimit-remaining-requests", "59"},
                                    {"x-ratelimit-remaining-tokens", "149984"},
                                    {"x-ratelimit-reset-requests", "1s"},
                                    {"x-ratelimit-reset-tokens", "6m0s"}},
                                   now);
    REQUIRE(openai);
    CHECK(openai->requests_limit == 60);
    CHECK(openai->requests_remaining == 59);
    CHECK(openai->tokens_limit == 150000);
    CHECK(openai->tokens_remaining == 149984);
    CHECK(openai->requests_reset == now + 1s);
    CHECK(openai->tokens_reset == now + 6min);
    // Anthropic's rate-limits page: RFC 3339 resets; input tokens stand in for tokens.
    auto anthropic =
        parse_rate_limit({{"anthropic-ratelimit-requests-limit", "50"},
                          {"anthropic-ratelimit-requests-remaining", "0"},
                          {"anthropic-ratelimit-requests-reset", "2023-11-14T22:13:50Z"},
                          {"anthropic-ratelimit-input-tokens-remaining", "9000"},
                          {"anthropic-ratelimit-input-tokens-reset", "2023-11-14T22:14:20.5+00:00"},
                          {"retry-after", "30"}},
                         now);
    REQUIRE(anthropic);
    CHECK(anthropic->requests_remaining == 0);
    CHECK(anthropic->requests_reset == now + 30s);
    CHECK(anthropic->tokens_remaining == 9000);
    CHECK(anthropic->tokens_reset == now + 60500ms);
    CHECK(anthropic->retry_after == 30000ms);
    CHECK_FALSE(parse_rate_limit({{"content-type", "application/json"}}, now));
    CHECK_FALSE(parse_rate_limit({{"x-ratelimit-remaining-requests", "-3"}}, now));
    // Found by fuzz_rate_limit: a retry-after this large overflowed the milliseconds.
    CHECK_FALSE(parse_rate_limit({{"retry-after", "33333333333333332"}}, now));
}

TEST_CASE("Go-style durations and RFC 3339 times as the providers write their resets") {
    using namespace std::chrono;
    CHECK(parse_go_duration("1s") == 1000ms);
    CHECK(parse_go_duration("6m0s") == 360000ms);
    CHECK(parse_go_duration("12ms") == 12ms);
    CHECK(parse_go_duration("1h2m3.5s") == 3723500ms);
    CHECK(parse_go_duration("0") == 0ms);
    CHECK(parse_go_duration("250us") == 0ms);
    for (const char* bad : {"", "s", "1", "1x", "-1s", "1.2.3s", "9999999999h"}) {
        INFO(bad);
        CHECK_FALSE(parse_go_duration(bad));
    }
    const auto epoch = system_clock::from_time_t(0);
    CHECK(parse_rfc3339("1970-01-01T00:00:01Z") == epoch + 1s);
    CHECK(parse_rfc3339("1970-01-01T01:00:00+01:00") == epoch);
    CHECK(parse_rfc3339("1970-01-01T00:00:00.25Z") == epoch + 250ms);
    for (const char* bad : {"", "1970-01-01", "1970-01-01T00:00:00", "1970-13-01T00:00:00Z",
                            "x970-01-01T00:00:00Z"}) {
        INFO(bad);
        CHECK_FALSE(parse_rfc3339(bad));
    }
}

TEST_CASE("run_chat carries the mock's request id and rate limit, and --json writes them") {
    MockServer server;
    server.start();
    for (auto provider : {Provider::openai, Provider::anthropic}) {
        ChatRequest request;
        request.provider = provider;
        request.base_url = server.base_url() + "/v1";
        request.model = "m";
        request.messages = {{"user", "hi"}};
        auto result = run_chat(request);
        REQUIRE(result.ok());
        CHECK(result->request_id.rfind("req_mock_", 0) == 0);
        REQUIRE(result->rate_limit);
        CHECK(result->rate_limit->requests_remaining);
        CHECK(result->rate_limit->tokens_remaining);
        auto json = nous::http::parse_json(to_json(result.value()));
        REQUIRE(json.ok());
        CHECK((*json.value())["rate_limit"].IsObject());
        CHECK((*json.value())["rate_limit"]["tokens_reset_ms"].IsInt64());
    }
}

TEST_CASE(
    "usage details: Anthropic's cache reads, OpenAI's cached and reasoning tokens in a whole "
    "response") {
    auto anthropic = parse_chat_response(
        Provider::anthropic,
        R"({"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",)"
        R"("usage":{"input_tokens":50,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"output_tokens":3}})");
    REQUIRE(anthropic.ok());
    REQUIRE(anthropic->usage);
    CHECK(anthropic->usage->cached_input_tokens == 2000);
    CHECK(anthropic->usage->reasoning_tokens == 0);
    auto openai = parse_chat_response(
        Provider::openai,
        R"({"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":10,"completion_tokens":90,"prompt_tokens_details":{"cached_tokens":4},)"
        R"("completion_tokens_details":{"reasoning_tokens":64}}})");
    REQUIRE(openai.ok());
    REQUIRE(openai->usage);
    CHECK(openai->usage->cached_input_tokens == 4);
    CHECK(openai->usage->reasoning_tokens == 64);
}

// ---- the mock's faults (x-mock-fault) through run_chat -----------------------

namespace {

struct FaultRun {
    Result<ChatResult> result = Error(ErrorCode::protocol, "not run");
    std::uint64_t requests = 0;  ///< what the server saw: 1 + the retries
    std::string text;            ///< what on_delta saw before the end
};

/// One chat through the mock with `x-mock-fault: fault`, one retry allowed,
/// the retry waits recorded instead of slept.
FaultRun run_fault(Provider provider, bool stream, const std::string& fault,
                   const std::function<void(nous::http::Options&)>& tune = {},
                   const std::string& delay_ms = "") {
    MockServer server;
    server.start();
    ChatRequest request;
    request.provider = provider;
    request.base_url = server.base_url() + (provider == Provider::gemini ? "/v1beta" : "/v1");
    request.model = "m";
    request.messages = {{"user", "hi"}};
    request.stream = stream;
    request.headers = {{"x-mock-fault", fault}};
    if (!delay_ms.empty()) request.headers.emplace_back("x-mock-fault-ms", delay_ms);
    nous::http::testing::Hooks hooks;
    hooks.sleep = [](nous::http::Milliseconds) {};
    nous::http::Options options;
    options.max_retries = 1;
    options.test_hooks = &hooks;
    options.stream_backend = "pull";  // the hooks run on this thread
    if (tune) tune(options);
    FaultRun run;
    run.result = run_chat(request, options, [&](const Delta& d) {
        run.text += d.text;
        return true;
    });
    run.requests = server.requests_served();
    return run;
}

const Provider kProviders[] = {Provider::openai, Provider::anthropic, Provider::gemini,
                               Provider::openai_responses};

}  // namespace

TEST_CASE("x-mock-fault: errors before the body, in each provider's words, retried or not") {
    struct Expect {
        std::string fault;
        int status;  ///< Anthropic's; the others send 503 for overloaded
        bool retried;
        bool quota;
    };
    const Expect expectations[] = {
        {"rate_limit", 429, true, false},
        {"quota", 429, false, true},
        {"overloaded", 529, true, false},
        {"server_error", 500, true, false},
    };
    for (Provider provider : kProviders) {
        for (const Expect& expect : expectations) {
            for (bool stream : {true, false}) {
                INFO(to_string(provider) << " " << expect.fault << " stream " << stream);
                auto run = run_fault(provider, stream, expect.fault);
                REQUIRE_FALSE(run.result.ok());
                const Error& e = run.result.error();
                CHECK(e.code == ErrorCode::http_status);
                const int status = expect.fault == "overloaded" && provider != Provider::anthropic
                                       ? 503
                                       : expect.status;
                CHECK(e.status == status);
                CHECK(e.quota_exhausted == expect.quota);
                CHECK(run.requests == (expect.retried ? 2u : 1u));
                CHECK(e.request_id.rfind("req_mock_", 0) == 0);
                // The provider's message, not a generic one.
                CHECK(e.message.find("HTTP " + std::to_string(status) + ": ") == 0);
                CHECK(e.message.size() > std::string("HTTP 500: ").size() + 5);
                auto limits = parse_rate_limit(e.headers);
                REQUIRE(limits);
                if (expect.fault == "rate_limit") {
                    CHECK(limits->requests_remaining == 0);
                    // The hint is the mock's short one (retry-after-ms, Gemini RetryInfo).
                    REQUIRE(e.retry_after);
                    CHECK(e.retry_after->count() == 20);
                }
            }
        }
    }
}

TEST_CASE("x-mock-fault midstream_error: the text so far, then the provider's error, no retry") {
    for (Provider provider : kProviders) {
        INFO(to_string(provider));
        auto run = run_fault(provider, true, "midstream_error");
        REQUIRE(run.result.ok());
        CHECK(run.text == "Hello from the");
        CHECK(run.result->text == "Hello from the");
        REQUIRE(run.result->stream_error);
        CHECK_FALSE(run.result->stream_error->empty());
        CHECK(run.requests == 1);
        // A whole reply with this fault is cut in the middle of its body.
        auto whole = run_fault(provider, false, "midstream_error");
        REQUIRE_FALSE(whole.result.ok());
        CHECK(whole.result.error().code == ErrorCode::truncated);
    }
}

TEST_CASE("x-mock-fault truncate: a clean end before the terminal event is truncated") {
    for (Provider provider : kProviders) {
        INFO(to_string(provider));
        auto run = run_fault(provider, true, "truncate");
        REQUIRE_FALSE(run.result.ok());
        CHECK(run.result.error().code == ErrorCode::truncated);
        CHECK(run.text == "Hello from the");
        auto partial = nous::http::parse_json(run.result.error().body);
        REQUIRE(partial.ok());
        CHECK(std::string((*partial.value())["text"].GetString()) == "Hello from the");
        CHECK(run.requests == 1);
        auto whole = run_fault(provider, false, "truncate");
        REQUIRE_FALSE(whole.result.ok());
        CHECK(whole.result.error().code == ErrorCode::truncated);
    }
}

TEST_CASE("x-mock-fault keepalive_only ends by event_idle_timeout, whatever the backend") {
    for (Provider provider : kProviders) {
        for (const char* backend : {"window", "pull"}) {
            INFO(to_string(provider) << " " << backend);
            auto run = run_fault(provider, true, "keepalive_only", [&](nous::http::Options& o) {
                o.stream_backend = backend;
                o.read_timeout = std::chrono::seconds(60);
                o.event_idle_timeout = std::chrono::milliseconds(300);
            });
            REQUIRE_FALSE(run.result.ok());
            CHECK(run.result.error().code == ErrorCode::timeout_read);
            CHECK_THAT(run.result.error().message, Catch::Contains("event_idle_timeout"));
            CHECK(run.requests == 1);  // a read timeout inside a stream is not resent
        }
    }
}

TEST_CASE("x-mock-fault slow_first_token: keep-alives, then the whole reply") {
    for (Provider provider : kProviders) {
        INFO(to_string(provider));
        // Keep-alives for 300 ms (Anthropic: pings) do not trip a 60 s idle
        // deadline, and do not end the stream: the reply follows.
        auto run = run_fault(
            provider, true, "slow_first_token",
            [](nous::http::Options& o) { o.event_idle_timeout = std::chrono::seconds(60); }, "300");
        REQUIRE(run.result.ok());
        CHECK(run.result->complete);
        CHECK(run.result->text.rfind("Hello from the", 0) == 0);
        // A first-event deadline shorter than the wait ends it, keep-alives or not.
        auto impatient = run_fault(
            provider, true, "slow_first_token",
            [](nous::http::Options& o) { o.first_event_timeout = std::chrono::milliseconds(100); },
            "5000");
        REQUIRE_FALSE(impatient.result.ok());
        CHECK(impatient.result.error().code == ErrorCode::timeout_read);
        CHECK_THAT(impatient.result.error().message, Catch::Contains("first_event_timeout"));
    }
}

TEST_CASE("an unknown x-mock-fault is a 400 that names the known ones") {
    auto run = run_fault(Provider::openai, false, "no_such_fault");
    REQUIRE_FALSE(run.result.ok());
    CHECK(run.result.error().status == 400);
    CHECK_THAT(run.result.error().message, Catch::Contains("keepalive_only"));
}

// ---- conversations: each provider's shape of one three-turn tool conversation ----

namespace {

/// system; user with text and an image; assistant reasoning (signed) and a
/// tool call; the tool's result; a user follow-up.
ChatRequest three_turns(Provider provider) {
    ChatRequest r;
    r.provider = provider;
    r.model = "m";
    r.stream = false;
    r.system = "Be brief.";
    r.reasoning_effort = ReasoningEffort::low;
    r.tools.push_back({"get_weather", "Weather", R"({"type":"object"})"});
    r.messages.push_back(
        ChatMessage::user("What is in this image, and the weather?",
                          {ContentPart::image("data:image/png;base64,iVBORw0KGgo=")}));
    ChatMessage assistant =
        ChatMessage::assistant("", {{"call_1", "get_weather", R"({"city":"Paris"})", "GSIG"}});
    assistant.reasoning = {"Need the weather.", "SIG", "rs_1", {}};
    r.messages.push_back(assistant);
    r.messages.push_back(ChatMessage::tool_result("call_1", R"({"c":18})"));
    r.messages.push_back(ChatMessage::user("Thanks. And tomorrow?"));
    return r;
}

void check_body(Provider provider, const char* expected) {
    auto call = build_chat_call(three_turns(provider));
    REQUIRE(call.ok());
    auto got = nous::http::parse_json(call->body);
    auto want = nous::http::parse_json(expected);
    REQUIRE(got.ok());
    REQUIRE(want.ok());
    INFO(call->body);
    CHECK(*got.value() == *want.value());
}

}  // namespace

TEST_CASE("a three-turn tool conversation with an image and reasoning, in OpenAI's shape") {
    check_body(Provider::openai, R"({"model":"m","messages":[
        {"role":"system","content":"Be brief."},
        {"role":"user","content":[{"type":"text","text":"What is in this image, and the weather?"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
            "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
        {"role":"tool","content":"{\"c\":18}","tool_call_id":"call_1"},
        {"role":"user","content":"Thanks. And tomorrow?"}],
        "reasoning_effort":"low",
        "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object"},"strict":false}}]})");
}

TEST_CASE("the same conversation as Responses API input items") {
    check_body(Provider::openai_responses, R"({"model":"m","instructions":"Be brief.","input":[
        {"role":"user","content":[{"type":"input_text","text":"What is in this image, and the weather?"},
            {"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]},
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Need the weather."}],"encrypted_content":"SIG"},
        {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
        {"type":"function_call_output","call_id":"call_1","output":"{\"c\":18}"},
        {"role":"user","content":"Thanks. And tomorrow?"}],
        "reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],
        "tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object"},"strict":false}]})");
}

TEST_CASE("the same conversation in Anthropic's alternating turns, the results merged first") {
    check_body(Provider::anthropic,
               R"({"model":"m","max_tokens":2048,"system":"Be brief.","messages":[
        {"role":"user","content":[{"type":"text","text":"What is in this image, and the weather?"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
        {"role":"assistant","content":[{"type":"thinking","thinking":"Need the weather.","signature":"SIG"},
            {"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"{\"c\":18}"},
            {"type":"text","text":"Thanks. And tomorrow?"}]}],
        "thinking":{"type":"enabled","budget_tokens":1024},
        "tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object"},"strict":false}]})");
}

TEST_CASE("the same conversation in Gemini's parts, roles user and model") {
    check_body(Provider::gemini, R"({"contents":[
        {"role":"user","parts":[{"text":"What is in this image, and the weather?"},
            {"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
        {"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"GSIG"}]},
        {"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"c":18}}},
            {"text":"Thanks. And tomorrow?"}]}],
        "systemInstruction":{"parts":[{"text":"Be brief."}]},
        "generationConfig":{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}},
        "tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather","parametersJsonSchema":{"type":"object"}}]}]})");
}

TEST_CASE("a conversation the builders cannot send is refused before any byte") {
    ChatRequest r;
    r.model = "m";
    r.messages.push_back({"robot", "hi"});
    CHECK(build_chat_call(r).error().code == ErrorCode::invalid_argument);
    r.messages = {ChatMessage::tool_result("", "x")};
    CHECK_THAT(build_chat_call(r).error().message, Catch::Contains("tool_call_id"));
}

TEST_CASE(
    "the mock refuses a thinking conversation whose signatures were dropped, as providers do") {
    MockServer server;
    server.start();
    for (Provider provider : {Provider::anthropic, Provider::gemini}) {
        INFO(to_string(provider));
        ChatRequest r = three_turns(provider);
        r.base_url = server.base_url() + (provider == Provider::gemini ? "/v1beta" : "/v1");
        auto kept = run_chat(r);
        REQUIRE(kept.ok());
        r.messages[1].reasoning = {};
        r.messages[1].tool_calls[0].signature.clear();
        auto dropped = run_chat(r);
        REQUIRE_FALSE(dropped.ok());
        CHECK(dropped.error().status == 400);
        CHECK_THAT(dropped.error().message, Catch::Contains("signature"));
    }
    // A turn whose thinking was redacted starts with its redacted block: taken.
    ChatRequest redacted = three_turns(Provider::anthropic);
    redacted.base_url = server.base_url() + "/v1";
    redacted.messages[1].reasoning = Reasoning{};
    redacted.messages[1].reasoning.redacted = {"RED1"};
    CHECK(run_chat(redacted).ok());
}

TEST_CASE("the --messages JSON shape round-trips a turn's message with its signatures") {
    ChatResult result;
    result.text = "ok";
    result.tool_calls = {{"call_1", "f", R"({"a":1})", "GSIG"}};
    result.reasoning = {"why", "SIG", "rs_1", {}};
    auto back = messages_from_json("[" + message_to_json(result.message()) + "]");
    REQUIRE(back.ok());
    REQUIRE(back->size() == 1);
    const ChatMessage& m = back.value()[0];
    CHECK(m.role == "assistant");
    CHECK(m.content == "ok");
    REQUIRE(m.tool_calls.size() == 1);
    CHECK(m.tool_calls[0].signature == "GSIG");
    CHECK(m.reasoning.signature == "SIG");
    CHECK(m.reasoning.id == "rs_1");
    auto bad = messages_from_json(R"([{"role":"tool","content":"x"}])");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("message 0"));
}

namespace {

/// Whether a fast reader's view lies inside the event's text (no copy).
bool points_into(std::string_view view, std::string_view text) {
    return view.data() >= text.data() && view.data() + view.size() <= text.data() + text.size();
}

/// Every event of the golden fixtures of `provider`'s format.
std::vector<Event> fixture_events(Provider provider) {
    std::vector<Event> events;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(NOUS_FIXTURES) + "/llm")) {
        const std::string name = entry.path().stem().string();
        if (entry.path().extension() != ".sse" || provider_of(name) != provider) continue;
        auto sse = nous::http::make_sse_decoder();
        std::vector<Event> decoded;
        bool done = false;
        REQUIRE_FALSE(sse->feed(slurp(entry.path()), decoded, done));
        for (const Event& e : decoded) events.push_back(e);
    }
    return events;
}

/// Whether `d` is a Delta with nothing but its text set.
bool is_bare_text(const Delta& d) {
    return d.reasoning.empty() && d.reasoning_signature.empty() && d.reasoning_id.empty() &&
           d.tool_calls.empty() && !d.input_tokens && !d.output_tokens && !d.cached_input_tokens &&
           !d.reasoning_tokens && !d.finish_reason && !d.error && !d.end_of_message;
}

/// The three-argument parse() against the two-argument one's `deltas`: an
/// event handed back as text is exactly one bare text Delta of that text
/// (and nothing is appended), any other event appends the same deltas.
void check_text_only_agrees(Provider provider, const Event& e, const std::vector<Delta>& deltas) {
    DeltaParser lean(provider);
    nous::http::EventView view;
    view.type = e.type;
    view.data = e.data;
    std::vector<Delta> out;
    std::optional<std::string_view> text_only = "stale";  // reset by every call
    nous::llm::detail::DeltaParserAccess::parse(lean, view, out, text_only);
    if (text_only) {
        CHECK(out.empty());
        REQUIRE(deltas.size() == 1);
        CHECK(is_bare_text(deltas[0]));
        CHECK(deltas[0].text == *text_only);
    } else {
        CHECK(out.size() == deltas.size());
    }
}

/// A provider's fast reader of common events against the document read:
/// the same verdict, the same deltas, the same message.
void check_fast_reader_agrees(Provider provider, const Event& e) {
    INFO(e.type << " " << e.data);
    DeltaParser fast(provider), document(provider);
    nous::llm::detail::DeltaParserAccess::use_fast_paths(document, false);
    std::vector<Delta> a, b;
    auto ea = fast.parse(e, a);
    auto eb = document.parse(e, b);
    CHECK(ea.has_value() == eb.has_value());
    Accumulator fa, fb;
    for (const Delta& d : a) fa.add(d);
    for (const Delta& d : b) fb.add(d);
    CHECK(a.size() == b.size());
    CHECK(to_json(fa.result()) == to_json(fb.result()));
    check_text_only_agrees(provider, e, a);
}

/// `data` as an event under each of `names`: an event's name counts where
/// its data says no type.
void add_under_names(std::vector<Event>& events, const char* data,
                     std::initializer_list<const char*> names) {
    for (const char* name : names) {
        Event& e = events.emplace_back();
        e.type = name;
        e.data = data;
    }
}

}  // namespace

TEST_CASE("the fast reader of Anthropic token events gives exactly the document read's deltas") {
    // Every Anthropic fixture's events, and shapes at the edges of what the
    // fast reader takes; each event also under other SSE event names (the
    // data's "type" wins, the event name counts without one).
    std::vector<Event> events = fixture_events(Provider::anthropic);
    for (
        const char* edge : {
            R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})",
            R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":""}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":1}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"a","text":"b"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","type":"thinking_delta","text":"a","thinking":"b"}})",
            R"({"type":"content_block_delta","delta":{"type":"thinking_delta","text":"t","thinking":"th"}})",
            R"({"type":"content_block_delta","delta":"text"})",
            R"({"type":"content_block_delta","delta":"text","delta":{"type":"text_delta","text":"second"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"a"},"delta":{"type":"text_delta","text":"b"}})",
            R"({"type":"content_block_delta","delta":[{"type":"text_delta","text":"a"}]})",
            R"({"type":"content_block_delta","delta":{"x":1},"delta":{"type":"text_delta","text":"b"}})",
            R"({"delta":{"type":"text_delta","text":"no type"}})",
            // The first of a duplicate is what a document read finds, whatever it is.
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":1,"text":"b"}})",
            R"({"type":"content_block_delta","delta":{"type":1,"type":"text_delta","text":"b"}})",
            R"({"type":1,"type":"content_block_delta","delta":{"type":"text_delta","text":"b"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":["x"],"text":"b"}})",
            R"({"type":1,"delta":{"type":"text_delta","text":"type not a string"}})",
            R"({"type":"ping","delta":{"type":"text_delta","text":"a ping"}})",
            R"({"type":"content_block_delta","type":"ping","delta":{"type":"text_delta","text":"dup type"}})",
            R"({"type":"content_block_delta","extra":{"type":"x","delta":{"text":"no"}},"delta":{"type":"text_delta","text":"yes"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","meta":{"text":"inner"},"text":"outer"}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"esc \"q\" \u00e9\n"}})",
            R"({"type":"content_block_delta","delta":{"type":"signature_delta","signature":"sig"}})",
            R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}})",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"x"},"usage":{"output_tokens":3}})",
            R"([{"type":"content_block_delta"}])",
            R"({"type":"content_block_delta","delta":{"type":"text_delta","text":"big"},"n":1e400})",
        })
        add_under_names(events, edge, {"content_block_delta", "ping", ""});
    for (const Event& e : events) check_fast_reader_agrees(Provider::anthropic, e);
    // And it does take the common ones itself, with a view into the text.
    nous::llm::detail::EventJson json;
    nous::llm::detail::EventJson::TextDelta delta;
    const std::string text =
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" token"}})";
    REQUIRE(json.anthropic_delta(text, "content_block_delta", delta));
    CHECK_FALSE(delta.reasoning);
    CHECK(delta.text == " token");
    CHECK(points_into(delta.text, text));
    REQUIRE(json.anthropic_delta(
        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}})",
        "", delta));
    CHECK(delta.reasoning);
    CHECK(delta.text == "hm");
    REQUIRE(json.anthropic_delta(R"({"index":0,"delta":{"type":"text_delta","text":"t"}})",
                                 "content_block_delta", delta));
    CHECK_FALSE(json.anthropic_delta(R"({"type":"message_stop"})", "message_stop", delta));
    CHECK_FALSE(json.anthropic_delta(R"({"type":"ping"})", "content_block_delta", delta));
}

TEST_CASE(
    "the fast reader of Bedrock Converse token events gives exactly the document read's deltas") {
    std::vector<Event> events;
    for (const char* edge : {
             R"({"contentBlockIndex":0,"delta":{"text":"hi"},"p":"abcdefgh"})",
             R"({"contentBlockIndex":0,"delta":{"text":"a\u00e9\n"}})",
             R"({"delta":{"text":""}})",
             R"({"delta":{"text":1}})",
             R"({"delta":{"text":"a","text":"b"}})",
             R"({"delta":{"text":"a","toolUse":{"input":"{}"}}})",
             R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\""}}})",
             R"({"delta":{"reasoningContent":{"text":"hm"}}})",
             R"({"delta":{"reasoningContent":{"signature":"sig"}}})",
             R"({"delta":"text"})",
             R"({"delta":["text"]})",
             R"({"delta":{"text":"a"},"delta":{"text":"b"}})",
             R"({"delta":{"text":["x"]}})",
             R"({"p":{"delta":{"text":"inner"}},"delta":{"text":"outer"}})",
             R"([{"delta":{"text":"array root"}}])",
             R"({"delta":{"text":"big"},"n":1e400})",
             R"({"stopReason":"end_turn"})",
         })
        add_under_names(events, edge, {"contentBlockDelta", "messageStop", "metadata", ""});
    for (const Event& e : events) check_fast_reader_agrees(Provider::bedrock, e);
    nous::llm::detail::EventJson json;
    nous::llm::detail::EventJson::TextDelta delta;
    const std::string text = R"({"contentBlockIndex":0,"delta":{"text":" token"},"p":"xyz"})";
    REQUIRE(json.converse_delta(text, "contentBlockDelta", delta));
    CHECK(delta.text == " token");
    CHECK(points_into(delta.text, text));
    CHECK_FALSE(json.converse_delta(text, "messageStop", delta));
    CHECK_FALSE(json.converse_delta(R"({"delta":{"reasoningContent":{"text":"r"}}})",
                                    "contentBlockDelta", delta));
}

TEST_CASE("the three-argument parse hands back each provider's common text event as text") {
    // Were it to append them instead, run_chat's messages would be the same
    // (the checks above pass either way), only costlier: so it is checked here.
    struct Case {
        Provider provider;
        const char* type;
        const char* data;
        const char* text;  ///< nullptr: appended as deltas
    };
    const Case cases[] = {
        {Provider::openai, "",
         R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]})",
         " tok"},
        {Provider::openai, "", R"({"choices":[{"index":0,"delta":{"content":"a\u00e9"}}]})",
         "a\xc3\xa9"},
        // An empty content is still a delta of its own (the role's first chunk).
        {Provider::openai, "", R"({"choices":[{"index":0,"delta":{"content":""}}]})", ""},
        {Provider::openai, "",
         R"({"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]})", nullptr},
        {Provider::openai, "", R"({"choices":[{"index":0,"delta":{"reasoning_content":"r"}}]})",
         nullptr},
        {Provider::anthropic, "content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})",
         "hi"},
        {Provider::anthropic, "content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}})",
         nullptr},
        {Provider::gemini, "",
         R"({"candidates":[{"content":{"parts":[{"text":"ge"}],"role":"model"},"index":0}],"modelVersion":"m"})",
         "ge"},
        {Provider::gemini, "",
         R"({"candidates":[{"content":{"parts":[{"text":"ge"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":8}})",
         nullptr},
        {Provider::openai_responses, "response.output_text.delta",
         R"({"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"yo","sequence_number":4})",
         "yo"},
    };
    for (const Case& c : cases) {
        INFO(c.data);
        DeltaParser parser(c.provider);
        nous::http::EventView view;
        view.type = c.type;
        view.data = c.data;
        std::vector<Delta> out;
        std::optional<std::string_view> text_only;
        REQUIRE_FALSE(nous::llm::detail::DeltaParserAccess::parse(parser, view, out, text_only));
        if (c.text) {
            REQUIRE(text_only);
            CHECK(*text_only == c.text);
            CHECK(out.empty());
        } else {
            CHECK_FALSE(text_only);
            CHECK_FALSE(out.empty());
        }
    }
}

TEST_CASE("the fast reader of Gemini chunks gives exactly the document read's deltas") {
    // Every Gemini fixture's events, and shapes at the edges of what the fast
    // reader takes (it hands anything else to the document read).
    std::vector<Event> events = fixture_events(Provider::gemini);
    for (
        const char* edge : {
            R"({"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0}]})",
            R"({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a","text":"b"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":1}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":null,"text":"b"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":["x"]}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":true}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"thought":true,"text":"t"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":false}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":true,"thought":false}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":"yes"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":null}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":{"a":1}}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thought":[true]}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"thought":true},{"text":"other part"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"t"},{"thought":true}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"thought":false},{"text":"t","thought":true}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"thought":true}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"","thought":true}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"hm","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":5,"thoughtsTokenCount":3}})",
            R"({"candidates":[{"content":{"parts":[{"text":"t","thoughtSignature":"sig"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]})",
            R"({"candidates":[{"content":{"parts":[{},{"text":"after empty"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"x","data":"AA"}},{"text":"t"}]}}]})",
            R"({"candidates":[{"content":{"parts":[1]}}]})",
            R"({"candidates":[{"content":{"parts":[[{"text":"nested"}]]}}]})",
            R"({"candidates":[{"content":{"parts":{"text":"not an array"}}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a"}],"parts":[{"text":"b"}]}}]})",
            R"({"candidates":[{"content":[{"parts":[{"text":"a"}]}]}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"content":{"parts":[{"text":"b"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"candidates":[]})",
            R"({"candidates":{"content":{"parts":[{"text":"a"}]}}})",
            R"({"candidates":"x"})",
            R"({"candidates":[1]})",
            R"({"candidates":[]})",
            R"({"candidates":[{}]})",
            R"({"candidates":[{"finishReason":"STOP","index":0}]})",
            R"({"candidates":[{"finishReason":"STOP","finishReason":"MAX_TOKENS"}]})",
            R"({"candidates":[{"finishReason":1}]})",
            R"({"candidates":[{"finishReason":{"x":1}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP","safetyRatings":[{"category":"HARM_CATEGORY_HATE_SPEECH","probability":"NEGLIGIBLE"}],"citationMetadata":{"citationSources":[{"startIndex":1,"uri":"u"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4,"totalTokenCount":12,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}]},"modelVersion":"gemini-2.5-flash","responseId":"r"})",
            R"({"usageMetadata":{"promptTokenCount":8,"cachedContentTokenCount":2,"thoughtsTokenCount":3}})",
            R"({"usageMetadata":{"promptTokenCount":8,"promptTokenCount":9}})",
            R"({"usageMetadata":{"promptTokenCount":8.5}})",
            R"({"usageMetadata":{"promptTokenCount":"8"}})",
            R"({"usageMetadata":{"promptTokenCount":null}})",
            R"({"usageMetadata":{"promptTokenCount":[8]}})",
            R"({"usageMetadata":{"promptTokenCount":9223372036854775807}})",
            R"({"usageMetadata":{"promptTokenCount":-1}})",
            R"({"usageMetadata":{}})",
            R"({"usageMetadata":5})",
            R"({"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"promptTokenCount":2}})",
            R"({"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}})",
            R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"error":null})",
            R"([{"candidates":[{"content":{"parts":[{"text":"wrapped"}]}}]}])",
            R"({"candidates":[{"content":{"parts":[{"text":"esc \"q\" \u00e9\n"}]}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"deep"}],"x":{"a":{"b":{"c":{"d":1}}}}}}]})",
            R"({"candidates":[{"content":{"parts":[{"text":"big"}]}}],"n":1e400})",
            R"({"modelVersion":"m"})",
            R"("text")",
        })
        events.emplace_back().data = edge;
    for (const Event& e : events) check_fast_reader_agrees(Provider::gemini, e);
    // And it does take the common chunk itself, with a view into the text.
    nous::llm::detail::EventJson json;
    nous::llm::detail::EventJson::GeminiChunk chunk;
    const std::string text =
        R"({"candidates": [{"content": {"parts": [{"text": " quick brown fox"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 4,"totalTokenCount": 12},"modelVersion": "gemini-1.5-flash"})";
    REQUIRE(json.gemini_chunk(text, chunk));
    CHECK(chunk.has_text);
    CHECK(chunk.text == " quick brown fox");
    CHECK(points_into(chunk.text, text));
    CHECK(chunk.finish_reason == "STOP");
    CHECK(chunk.input_tokens == 8);
    CHECK(chunk.output_tokens == 4);
    CHECK_FALSE(chunk.cached_input_tokens);
    // A thought part's text is reasoning, read here too.
    REQUIRE(json.gemini_chunk(
        R"({"candidates":[{"content":{"parts":[{"text":"hm","thought":true}]}}]})", chunk));
    CHECK(chunk.thought);
    CHECK(chunk.text == "hm");
    CHECK_FALSE(json.gemini_chunk(R"({"error":{"code":500}})", chunk));
    CHECK_FALSE(json.gemini_chunk(
        R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]})", chunk));
}

TEST_CASE("the fast reader of Responses token events gives exactly the document read's deltas") {
    std::vector<Event> events = fixture_events(Provider::openai_responses);
    REQUIRE(events.size() > 10);
    for (
        const char* edge : {
            R"({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi","sequence_number":4,"logprobs":[]})",
            R"({"type":"response.reasoning_summary_text.delta","delta":"why","summary_index":0})",
            R"({"type":"response.reasoning_text.delta","delta":"raw"})",
            R"({"type":"response.output_text.delta","delta":""})",
            R"({"type":"response.output_text.delta"})",
            R"({"type":"response.output_text.delta","delta":1})",
            R"({"type":"response.output_text.delta","delta":{"text":"no"}})",
            R"({"type":"response.output_text.delta","delta":"a","delta":"b"})",
            R"({"type":"response.output_text.delta","type":"error","delta":"dup type"})",
            R"({"type":1,"delta":"type not a string"})",
            R"({"type":["response.output_text.delta"],"delta":"type an array"})",
            R"({"delta":"no type"})",
            // The first of a duplicate is what a document read finds, whatever it is.
            R"({"type":"response.output_text.delta","delta":1,"delta":"b"})",
            R"({"type":1,"type":"response.output_text.delta","delta":"b"})",
            R"({"type":"response.output_text.delta","delta":{"x":1},"delta":"b"})",
            R"({"type":"response.output_text.done","delta":"a done echo"})",
            R"({"type":"response.output_text.delta","meta":{"type":"x","delta":"inner"},"delta":"outer"})",
            R"({"type":"response.output_text.delta","delta":"esc \"q\" \u00e9\n"})",
            R"({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\""})",
            R"({"type":"response.output_text.delta","delta":"x","n":1e400})",
            R"([{"type":"response.output_text.delta","delta":"root array"}])",
        }) {
        Event e;
        e.data = edge;
        events.push_back(e);
    }
    for (const Event& e : events) check_fast_reader_agrees(Provider::openai_responses, e);
    nous::llm::detail::EventJson json;
    nous::llm::detail::EventJson::TextDelta delta;
    const std::string text =
        R"({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":" token"})";
    REQUIRE(json.responses_delta(text, delta));
    CHECK_FALSE(delta.reasoning);
    CHECK(delta.text == " token");
    CHECK(points_into(delta.text, text));
    REQUIRE(json.responses_delta(R"({"type":"response.reasoning_summary_text.delta","delta":"w"})",
                                 delta));
    CHECK(delta.reasoning);
    CHECK_FALSE(json.responses_delta(R"({"type":"response.completed","response":{}})", delta));
}

TEST_CASE(
    "a stream's chunks of one shape are read from the shape, exactly as the scan reads them") {
    using nous::llm::detail::EventJson;
    // api.openai.com's token chunk: the content string and the root
    // "obfuscation" padding are the holes of its shape.
    const std::string head =
        R"({"id":"chatcmpl-BQ8n","object":"chat.completion.chunk","created":1745671234,)"
        R"("model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":)";
    const std::string middle = R"(},"logprobs":null,"finish_reason":null}],"obfuscation":)";
    auto chunk = [&](const std::string& content, const std::string& padding) {
        return head + content + middle + padding + "}";
    };
    struct Case {
        std::string text;
        bool by_shape;  // read from the shape (else the scan decides)
    };
    const std::vector<Case> cases = {
        {chunk(R"("Hello")", R"("x1")"), false},  // the first: its shape is kept
        {chunk(R"(" world")", R"("abcdef")"), true},
        {chunk(R"("")", R"("")"), true},
        {chunk(R"("line\none \"q\" \u00e9")", R"("zz")"), true},
        {chunk(R"("\ud83d\ude00")", R"("\u0041")"), true},
        {chunk(R"("a\"}]}")", R"("p")"), true},  // bytes like the literal's, inside the string
        // Not a string in a hole, or other bytes around one: the scan decides
        // (and a plain chunk it takes becomes the shape: those come last).
        {chunk(R"("a")", R"("p")") + "x", false},
        {chunk("5", R"("p")"), false},
        {chunk("null", R"("p")"), false},
        {chunk(R"("a")", "7"), false},
        {chunk(R"("a")", R"("p")") + " ", false},
        {chunk(R"("a","content":"b")", R"("p")"), false},
        {chunk(R"("a)", R"("p")"), false},
        {chunk(R"("a")", R"("p","obfuscation":"q")"), false},
        {head.substr(0, 60), false},
        {chunk(R"("a\u0000b")", R"("p")"), false},
        {chunk(R"("\ud800")", R"("p")"), false},
        {chunk("\"bad\x01"
               "control\"",
               R"("p")"),
         false},
        {chunk(R"("a\x")", R"("p")"), false},
        // A plain chunk the scan took (the last: the one with a second
        // padding member) became the shape; this one's shape replaces it.
        {chunk(R"("after the misses")", R"("p")"), false},
        {chunk(R"("again")", R"("p2")"), true},
        // A finish chunk is read by the scan and leaves the shape as it was.
        {head.substr(0, head.size() - 11) + R"(},"logprobs":null,"finish_reason":"stop"}]})",
         false},
        {chunk(R"("still")", R"("p")"), true},
        // Another plain shape (no padding) replaces it.
        {R"({"id":"x","choices":[{"index":0,"delta":{"content":"one"}}]})", false},
        {R"({"id":"x","choices":[{"index":0,"delta":{"content":"two"}}]})", true},
        {chunk(R"("old shape")", R"("p")"), false},
        // A chunk with usage is no shape: its usage would be lost.
        {R"({"choices":[{"index":0,"delta":{"content":"u1"}}],"usage":{"prompt_tokens":1}})",
         false},
        {R"({"choices":[{"index":0,"delta":{"content":"u2"}}],"usage":{"prompt_tokens":1}})",
         false},
    };
    EventJson stream_json;
    DeltaParser fast(Provider::openai), document(Provider::openai);
    nous::llm::detail::DeltaParserAccess::use_fast_paths(document, false);
    Accumulator fast_message, document_message;
    for (const Case& c : cases) {
        INFO(c.text);
        EventJson::OpenAIChunk by_stream, by_scan;
        EventJson fresh;  // no shape yet: always the scan
        const bool accepted = stream_json.openai_chunk(c.text, by_stream);
        CHECK(stream_json.last_read_by_shape() == c.by_shape);
        CHECK(nous::test::describe_chunk(accepted, by_stream) ==
              nous::test::describe_chunk(fresh.openai_chunk(c.text, by_scan), by_scan));
        if (c.by_shape)
            CHECK(points_into(by_stream.content, c.text) ==
                  (c.text.find('\\') == std::string::npos));
        // And a stream's deltas, event after event, are the document read's.
        Event e;
        e.data = c.text;
        std::vector<Delta> a, b;
        CHECK(fast.parse(e, a).has_value() == document.parse(e, b).has_value());
        for (const Delta& d : a) fast_message.add(d);
        for (const Delta& d : b) document_message.add(d);
        CHECK(to_json(fast_message.result()) == to_json(document_message.result()));
    }
}

TEST_CASE("the OpenAI chunk reader takes the common chunks itself, with views into the text") {
    // If it refused these, every token would go to the document read: the
    // deltas would be the same (the tests comparing the two readers pass
    // either way), only slower. So its acceptance is checked here.
    nous::llm::detail::EventJson json;
    nous::llm::detail::EventJson::OpenAIChunk chunk;
    const std::string real =  // the fields api.openai.com sends today
        R"({"id":"chatcmpl-BQ8n","object":"chat.completion.chunk","created":1745671234,)"
        R"("model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_0392822090",)"
        R"("choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"obfuscation":"a1b2"})";
    REQUIRE(json.openai_chunk(real, chunk));
    CHECK(chunk.has_content);
    CHECK(chunk.content == " token");
    // A view into the text itself: no copy of the chunk.
    CHECK(points_into(chunk.content, real));
    CHECK_FALSE(chunk.has_finish_reason);

    const std::string first =
        R"({"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]})";
    REQUIRE(json.openai_chunk(first, chunk));
    CHECK(chunk.has_content);
    CHECK(chunk.content.empty());

    const std::string escaped =
        R"({"choices":[{"index":0,"delta":{"content":"line\none \"q\" \u00e9"}}]})";
    REQUIRE(json.openai_chunk(escaped, chunk));
    CHECK(chunk.content == "line\none \"q\" \xc3\xa9");

    const std::string reasoning =
        R"({"choices":[{"index":0,"delta":{"reasoning_content":"think","content":null}}]})";
    REQUIRE(json.openai_chunk(reasoning, chunk));
    CHECK(chunk.has_reasoning_content);
    CHECK(chunk.reasoning_content == "think");
    CHECK_FALSE(chunk.has_content);

    const std::string last = R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})";
    REQUIRE(json.openai_chunk(last, chunk));
    CHECK(chunk.has_finish_reason);
    CHECK(chunk.finish_reason == "stop");

    // The last chunk when the request asks for usage: read too, so that a
    // stream of plain chunks never needs a document.
    const std::string usage =
        R"({"id":"c","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,)"
        R"("prompt_tokens_details":{"cached_tokens":3,"audio_tokens":0},)"
        R"("completion_tokens_details":{"reasoning_tokens":4,"audio_tokens":0}},"obfuscation":"x"})";
    REQUIRE(json.openai_chunk(usage, chunk));
    CHECK(chunk.has_usage);
    CHECK(chunk.input_tokens == 19);
    CHECK(chunk.output_tokens == 10);
    CHECK(chunk.cached_input_tokens == 3);
    CHECK(chunk.reasoning_tokens == 4);
    CHECK_FALSE(chunk.has_content);

    // Shapes it leaves to the document read.
    for (const char* other : {
             R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t"}]}}]})",
             R"({"choices":[],"usage":"x"})",
             R"({"choices":[{"index":0,"delta":{"content":"x"}}],"created":1e9})",
             R"({"error":{"message":"boom"}})",
             R"({"choices":[{"index":0,"delta":{"content":"x"}}]} trailing)",
         }) {
        INFO(other);
        CHECK_FALSE(json.openai_chunk(other, chunk));
    }
}

TEST_CASE("the strict JSON scanner reads its subset exactly as RapidJSON and refuses the rest") {
    // Accepted: the scanner's calls equal RapidJSON's (views into the text,
    // escapes decoded at their own offsets in the scratch buffer).
    for (
        const char* text : {
            R"({"id":"chatcmpl-1","created":1745671234,"choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]})",
            R"({"s":"a\"b\\c\/d\b\f\n\r\t","u":"\u00e9\u20ac\ud83d\ude00\u0000z","e":""})",
            R"({"first":"x\ny","second":"plain","third":"\"q\"","long":"0123456789abcdef0123456789abcdef\t"})",
            R"([-0,0,7,-7,123456789012345678,-123456789012345678,1.5,-0.25,0.0,10.125])",
            R"([true,false,null,[],{},[[{}]],{"a":{"b":[1,{"c":null}]}}])",
            " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n",
            "\"\xc3\xa9\xff\x80 raw bytes past ASCII\"",
            "42",
        }) {
        INFO(text);
        const auto verdict = nous::test::compare_json_scan(text);
        CHECK(verdict.scanner_accepted);
        CHECK(verdict.reader_accepted);
        CHECK(verdict.scanner_calls == verdict.reader_calls);
    }
    // Refused: malformed (RapidJSON refuses it too) or outside the subset
    // (RapidJSON reads it; the document read then does).
    for (const char* text : {
             "",
             " ",
             "{",
             "}",
             "{\"a\"}",
             "{\"a\":}",
             "{\"a\":1,}",
             "[1,]",
             "[1 2]",
             "{\"a\" 1}",
             "{\"a\":1}x",
             "{}{}",
             "{a:1}",
             "[01]",
             "[1.]",
             "[.5]",
             "[-]",
             "[+1]",
             "[1e5]",
             "[1E-2]",
             "[1.5e3]",
             "[1234567890123456789]",
             "[tru]",
             "[nul]",
             "[falsey]",
             "[True]",
             "\"unterminated",
             "\"bad \\x escape\"",
             "\"\\u12\"",
             "\"\\u12g4\"",
             "\"lone low \\udc00\"",
             "\"lone high \\ud800\"",
             "\"high then \\ud800\\u0041\"",
             "\"tab\tinside\"",
             "\"newline\ninside\"",
             "\"ends with backslash\\",
         }) {
        INFO(text);
        const auto verdict = nous::test::compare_json_scan(text);
        CHECK_FALSE(verdict.scanner_accepted);
    }
    // A NUL anywhere: refused, inside a string or out.
    CHECK_FALSE(
        nous::test::compare_json_scan(std::string_view("{\"a\":\"x\0y\"}", 11)).scanner_accepted);
    CHECK_FALSE(nous::test::compare_json_scan(std::string_view("{}\0", 3)).scanner_accepted);
    // Nesting past the scanner's own bound: refused, whatever the handler says.
    CHECK_FALSE(nous::test::compare_json_scan(std::string(65, '[') + std::string(65, ']'))
                    .scanner_accepted);
    CHECK(nous::test::compare_json_scan(std::string(64, '[') + std::string(64, ']'))
              .scanner_accepted);
    // Every prefix of an accepted chunk, cut anywhere: refused or agreeing,
    // and no read past its end (AddressSanitizer, on the exact-size copies).
    const std::string chunk =
        R"({"id":"chatcmpl-BQ8nLkVbwOWtj5pQ2YGx0xR3uJm9s","choices":[{"index":0,"delta":{"content":"a\u00e9\n b"},"finish_reason":"stop"}]})";
    for (std::size_t n = 0; n < chunk.size(); ++n) {
        const std::string prefix = chunk.substr(0, n);
        INFO(prefix);
        const auto verdict = nous::test::compare_json_scan(prefix);
        CHECK_FALSE(verdict.scanner_accepted);
        CHECK(verdict.agrees());
    }
}

TEST_CASE("the fast reader of OpenAI chunks gives exactly the document read's deltas") {
    // Every OpenAI fixture's events, and shapes at the edges of what the fast
    // reader takes (it hands anything else to the document read).
    std::vector<std::string> events;
    for (const Event& e : fixture_events(Provider::openai)) events.push_back(e.data);
    for (
        const char* edge : {
            R"({"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]})",
            R"({"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]})",
            R"({"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]})",
            R"({"choices":[{"index":0,"delta":{"content":null,"content":"dup"}}]})",
            R"({"choices":[{"index":0,"finish_reason":null,"finish_reason":"stop","delta":{}}]})",
            R"({"choices":[{"index":"0","delta":{"content":"string index"}}]})",
            R"({"choices":[{"index":18446744073709551615,"delta":{"content":"huge index"}}]})",
            R"({"choices":[{"index":0,"delta":null}]})",
            R"({"choices":[{"index":0,"delta":{"content":"x","tool_calls":null}}]})",
            R"({"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":"rc"}}]})",
            R"({"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"x"}]}}]})",
            R"({"choices":[],"usage":null})",
            R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}})",
            // Usage: the first of every key counts, whatever its value (a
            // count beside the details: the message shows usage only then).
            R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":3,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":4,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"x"})",
            R"({"choices":[],"usage":null,"usage":{"prompt_tokens":1}})",
            R"({"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2,"completion_tokens":3}})",
            R"({"usage":{"prompt_tokens":"5","prompt_tokens":6}})",
            R"({"usage":{"prompt_tokens":1.5,"completion_tokens":2}})",
            R"({"usage":{"prompt_tokens":{"a":1},"prompt_tokens":7}})",
            R"({"usage":{"prompt_tokens":[1],"prompt_tokens":7,"completion_tokens":[],"completion_tokens":8}})",
            R"({"usage":{"prompt_tokens":null,"completion_tokens":-3}})",
            R"({"usage":{"prompt_tokens":true,"prompt_tokens":4}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":null,"prompt_tokens_details":{"cached_tokens":2}}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":[1],"prompt_tokens_details":{"cached_tokens":2}}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":"x","completion_tokens_details":5,"completion_tokens_details":{"reasoning_tokens":1}}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":1},"prompt_tokens_details":{"cached_tokens":2}}})",
            R"({"usage":{"completion_tokens":1,"completion_tokens_details":{"cached_tokens":5,"reasoning_tokens":6},"prompt_tokens_details":{"reasoning_tokens":7,"cached_tokens":8}}})",
            R"({"usage":{"completion_tokens":1,"x":{"prompt_tokens":9},"prompt_tokens_details":{"y":{"cached_tokens":9}}}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":"a","cached_tokens":3}}})",
            R"({"usage":{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":[2],"cached_tokens":3}}})",
            R"({"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}})",
            R"({"choices":[{"index":0,"delta":{},"usage":{"prompt_tokens":1}}]})",
            R"({"choices":[],"usage":{}})",
            R"({"usage":5})",
            R"({"usage":[1]})",
            R"({"usage":{"prompt_tokens":9223372036854775807}})",
            R"({"error":null,"choices":[{"index":0,"delta":{"content":"e"}}]})",
            R"({"object":"error","message":"boom"})",
            R"({"choices":{"index":0}})",
            // A duplicate "choices": the document read takes the first, whatever it is
            // (found by fuzz_llm_deltas: a scalar, then an array).
            R"({"choices":1,"choices":[{"index":0,"delta":{"content":"second"}}]})",
            R"({"choices":"x","choices":[{"index":0,"delta":{"content":"second"}}]})",
            R"({"choices":{"a":1},"choices":[{"index":0,"delta":{"content":"second"}}]})",
            R"({"choices":[{"index":0,"delta":{"content":"first"}}],"choices":[{"index":0,"delta":{"content":"second"}}]})",
            R"({"choices":[1,2]})",
            R"([{"choices":[]}])",
            R"({"choices":[{"index":0,"delta":{"content":"a\u00e9\n"}}]})",
        })
        events.emplace_back(edge);
    for (const std::string& data : events) {
        Event e;
        e.data = data;
        check_fast_reader_agrees(Provider::openai, e);
    }
}
