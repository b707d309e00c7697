// Structured outputs and the rest of a request: every new field's shape per
// provider and its refusal where the provider does not take it, the schema
// dialects, the incremental JSON reader (every fixture whole, byte by byte
// and at random splits), the schema check of the final value, refusals, and
// usage that means the same for every provider.

#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "chat_body.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/embed.hpp"
#include "nous/llm/json_shapes.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::llm;
using nous::http::ErrorCode;
using nous::http::MockServer;

namespace {

const Provider kAll[] = {Provider::openai, Provider::openai_responses, Provider::anthropic,
                         Provider::gemini};

ChatRequest basic(Provider provider) {
    ChatRequest r;
    r.provider = provider;
    r.model = "m";
    r.messages = {{"user", "hi"}};
    r.stream = false;
    return r;
}

/// `basic(provider)` with an assistant's tool call, and its result after it.
ChatRequest with_call(Provider provider, ToolCall call) {
    ChatRequest r = basic(provider);
    ChatMessage assistant;
    assistant.role = "assistant";
    assistant.tool_calls = {std::move(call)};
    r.messages.push_back(assistant);
    r.messages.push_back(ChatMessage{"tool", "done"});
    r.messages.back().tool_call_id = r.messages[1].tool_calls[0].id;
    return r;
}

using nous::test::body_of;

std::string at(const rapidjson::Value& root, const char* pointer) {
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(root);
    if (!v) return "<absent>";
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v->Accept(w);
    return buffer.GetString();
}

const char* kSchema =
    R"({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},)"
    R"("tags":{"type":"array","items":{"type":"string","enum":["sun","rain"]}}},)"
    R"("required":["city","days","tags"],"additionalProperties":false})";

}  // namespace

// ---- the request surface ------------------------------------------------------------

TEST_CASE("tool_choice, parallel_tool_calls, stop, top_p, seed: each provider's field") {
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.tools = {ToolSpec{"get_weather", "", R"({"type":"object","properties":{}})"}};
        r.tool_choice = ToolChoice::from_name("get_weather");
        r.top_p = 0.5;
        if (p == Provider::openai || p == Provider::gemini) r.seed = 7;
        if (p != Provider::openai_responses) r.stop = {"END", "STOP"};
        if (p != Provider::gemini) r.parallel_tool_calls = false;
        auto doc = body_of(r);
        switch (p) {
            case Provider::openai:
            case Provider::azure:
                CHECK(at(*doc, "/tool_choice") ==
                      R"({"type":"function","function":{"name":"get_weather"}})");
                CHECK(at(*doc, "/parallel_tool_calls") == "false");
                CHECK(at(*doc, "/stop") == R"(["END","STOP"])");
                CHECK(at(*doc, "/top_p") == "0.5");
                CHECK(at(*doc, "/seed") == "7");
                break;
            case Provider::openai_responses:
            case Provider::azure_responses:
                CHECK(at(*doc, "/tool_choice") == R"({"type":"function","name":"get_weather"})");
                CHECK(at(*doc, "/parallel_tool_calls") == "false");
                CHECK(at(*doc, "/top_p") == "0.5");
                break;
            case Provider::anthropic:
                CHECK(at(*doc, "/tool_choice") ==
                      R"({"type":"tool","name":"get_weather","disable_parallel_tool_use":true})");
                CHECK(at(*doc, "/stop_sequences") == R"(["END","STOP"])");
                CHECK(at(*doc, "/top_p") == "0.5");
                break;
            case Provider::gemini:
                CHECK(
                    at(*doc, "/toolConfig") ==
                    R"({"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}})");
                CHECK(at(*doc, "/generationConfig/stopSequences") == R"(["END","STOP"])");
                CHECK(at(*doc, "/generationConfig/topP") == "0.5");
                CHECK(at(*doc, "/generationConfig/seed") == "7");
                break;
            case Provider::bedrock:  // their own tests: bedrock_test.cpp, vertex_test.cpp
            case Provider::vertex:
            case Provider::vertex_anthropic:
                FAIL("the platforms are not among kAll");
                break;
        }
    }
}

TEST_CASE("tool_choice words: auto, none, required in each provider's spelling") {
    const char* expected[4][3] = {{R"("auto")", R"("none")", R"("required")"},
                                  {R"("auto")", R"("none")", R"("required")"},
                                  {R"({"type":"auto"})", R"({"type":"none"})", R"({"type":"any"})"},
                                  {R"({"functionCallingConfig":{"mode":"AUTO"}})",
                                   R"({"functionCallingConfig":{"mode":"NONE"}})",
                                   R"({"functionCallingConfig":{"mode":"ANY"}})"}};
    const char* words[] = {"auto", "none", "required"};
    for (int pi = 0; pi < 4; ++pi) {
        const Provider p = kAll[pi];
        for (int wi = 0; wi < 3; ++wi) {
            INFO(to_string(p) << " " << words[wi]);
            ChatRequest r = basic(p);
            r.tools = {ToolSpec{"f", "", R"({"type":"object"})"}};
            r.tool_choice = ToolChoice::from_name(words[wi]);
            auto doc = body_of(r);
            CHECK(at(*doc, p == Provider::gemini ? "/toolConfig" : "/tool_choice") ==
                  expected[pi][wi]);
        }
    }
}

TEST_CASE("a temperature, top_p or max_tokens out of range is refused before a byte") {
    // A Writer writes nothing for NaN or infinity and goes on: the body would
    // be broken JSON, sent.
    const double inf = std::numeric_limits<double>::infinity();
    for (const Provider provider : {Provider::openai, Provider::openai_responses,
                                    Provider::anthropic, Provider::gemini, Provider::bedrock}) {
        struct Bad {
            const char* field;
            double value;
        };
        for (const Bad bad : {Bad{"temperature", std::nan("")}, Bad{"temperature", inf},
                              Bad{"temperature", -inf}, Bad{"temperature", -0.5},
                              Bad{"top_p", std::nan("")}, Bad{"top_p", inf}, Bad{"top_p", 1.5}}) {
            INFO(to_string(provider) << " " << bad.field << " " << bad.value);
            ChatRequest r = basic(provider);
            (std::string_view(bad.field) == "top_p" ? r.top_p : r.temperature) = bad.value;
            auto call = build_chat_call(r);
            REQUIRE_FALSE(call);
            CHECK(call.error().code == ErrorCode::invalid_argument);
            CHECK_THAT(call.error().message, Catch::Contains(bad.field));
        }
        for (const int max_tokens : {0, -1}) {
            ChatRequest r = basic(provider);
            r.max_tokens = max_tokens;
            auto call = build_chat_call(r);
            REQUIRE_FALSE(call);
            CHECK_THAT(call.error().message, Catch::Contains("max_tokens"));
        }
        // In range it is taken (Bedrock's call would need AWS credentials first).
        if (provider == Provider::bedrock) continue;
        ChatRequest r = basic(provider);
        r.temperature = 0;
        auto fine = build_chat_call(r);
        INFO(to_string(provider) << ": " << (fine ? "" : fine.error().message));
        CHECK(fine);
    }
}

TEST_CASE("a tool name the provider would refuse is refused before sending") {
    // Each provider's own rule: the OpenAI SDK's FunctionDefinition, the
    // Anthropic API's pattern, the Gen AI SDK's FunctionDeclaration, the
    // Converse service model's ToolName.
    struct Case {
        Provider provider;
        std::vector<std::string> refused, taken;
    };
    const std::string long64(64, 'a'), long65(65, 'a'), long128(128, 'a'), long129(129, 'a');
    const std::vector<Case> cases = {
        {Provider::openai,
         {"", "get weather", "get.weather", "ns:get", long65, "caf\xC3\xA9"},
         {"get_weather-2", "9lives", long64}},
        {Provider::openai_responses, {"get.weather", long65}, {"get_weather-2", long64}},
        {Provider::anthropic, {"", "get.weather", "a b", long129}, {"get_weather-2", long128}},
        {Provider::gemini,
         {"", "9lives", "-get", "get weather", "get/weather", long65},
         {"_get.weather:v1-2", "getWeather", long64}},
        {Provider::bedrock, {"", "get.weather", long65}, {}},
    };
    auto with_tool = [](Provider provider, const std::string& name) {
        ChatRequest r = basic(provider);
        r.tools = {ToolSpec{name, "", R"({"type":"object","properties":{}})"}};
        return build_chat_call(r);
    };
    for (const Case& c : cases) {
        for (const std::string& name : c.refused) {
            INFO(to_string(c.provider) << " refuses '" << name << "'");
            auto built = with_tool(c.provider, name);
            REQUIRE_FALSE(built);
            CHECK(built.error().code == ErrorCode::invalid_argument);
            // The empty name is refused first, as every format's.
            CHECK_THAT(built.error().message,
                       Catch::Contains(name.empty() ? "needs a name" : "takes a tool name of"));
        }
        for (const std::string& name : c.taken) {
            INFO(to_string(c.provider) << " takes '" << name << "'");
            CHECK(with_tool(c.provider, name));
        }
    }
    // Converse checks the conversation's calls too: one the model named
    // otherwise would fail every later request.
    for (const Provider provider : {Provider::bedrock, Provider::openai}) {
        auto history = build_chat_call(with_call(provider, {"call_1", "$READFILE", "{}", ""}));
        INFO(to_string(provider));
        if (provider == Provider::openai) {
            CHECK(history);  // its rule is for the tools it is offered
            continue;
        }
        REQUIRE_FALSE(history);
        CHECK_THAT(history.error().message,
                   Catch::Contains("call_1") && Catch::Contains("takes a tool name of"));
    }
    // A name with a line break is named, not quoted: it would forge a log line.
    auto built = with_tool(Provider::openai, "f\r\nforged: yes");
    REQUIRE_FALSE(built);
    CHECK_THAT(built.error().message, Catch::Contains("unprintable"));
    CHECK(built.error().message.find('\n') == std::string::npos);
    // So is one whose schema is refused, which is checked before the name.
    ChatRequest bad_schema = basic(Provider::openai);
    bad_schema.tools = {ToolSpec{"f\r\nforged: yes", "", "[1]"}};
    auto refused_schema = build_chat_call(bad_schema);
    REQUIRE_FALSE(refused_schema);
    CHECK_THAT(refused_schema.error().message,
               Catch::Contains("(its name unprintable)") && Catch::Contains("parameters_schema"));
    CHECK(refused_schema.error().message.find('\n') == std::string::npos);
}

TEST_CASE("a tool call whose arguments are not a JSON object is refused where input is an object") {
    // Anthropic's input, Gemini's args and Converse's input are objects: the
    // arguments were sent as {} in the model's name, and a number past a
    // double's range broke the body.
    for (const std::string arguments :
         {"{\"city\":\"Par", "[1,2]", "\"text\"", "{\"x\":1.8e308}"}) {
        for (const Provider provider : {Provider::openai, Provider::openai_responses,
                                        Provider::anthropic, Provider::gemini, Provider::bedrock}) {
            INFO(to_string(provider) << " " << arguments);
            ChatRequest r = basic(provider);
            ChatMessage call;
            call.role = "assistant";
            call.tool_calls = {{"call_1", "weather", arguments, ""}};
            r.messages.push_back(call);
            r.messages.push_back(ChatMessage{"tool", "sunny"});
            r.messages.back().tool_call_id = "call_1";
            auto built = build_chat_call(r);
            if (provider == Provider::openai || provider == Provider::openai_responses) {
                // Their arguments are a string: sent as the model wrote them.
                REQUIRE(built);
                continue;
            }
            REQUIRE_FALSE(built);
            CHECK(built.error().code == ErrorCode::invalid_argument);
            CHECK_THAT(built.error().message,
                       Catch::Contains("call_1") && Catch::Contains("not a JSON object"));
        }
    }
    {
        // A model's id with a line break is not quoted: it would forge a log line.
        ChatRequest r = basic(Provider::anthropic);
        ChatMessage call;
        call.role = "assistant";
        call.tool_calls = {{"id\r\nforged: yes", "weather", "[1]", ""}};
        r.messages.push_back(call);
        auto built = build_chat_call(r);
        REQUIRE_FALSE(built);
        CHECK_THAT(built.error().message, Catch::Contains("not a JSON object"));
        CHECK(built.error().message.find('\n') == std::string::npos);
    }
    // Empty arguments are the empty object.
    auto built = build_chat_call(with_call(Provider::anthropic, {"call_1", "now", "", ""}));
    REQUIRE(built);
    CHECK_THAT(built->body, Catch::Contains(R"("input":{})"));
}

TEST_CASE("a model that is not one path segment is refused where the URL names the model") {
    // Gemini and Vertex AI put the model in the path: "x?alt=y", "../files"
    // or "a/b" would send the request, and its key, elsewhere on the host.
    for (const std::string model : {"gemini-pro?alt=json", "../../v1beta/files", "tuned/x", "a b",
                                    "m#frag", "m%2F", "m:generateContent", "..", "m\r\nX: y"}) {
        for (const Provider provider :
             {Provider::gemini, Provider::vertex, Provider::vertex_anthropic}) {
            INFO(to_string(provider) << " " << model);
            ChatRequest r = basic(provider);
            r.model = model;
            auto call = build_chat_call(r);
            REQUIRE_FALSE(call);
            CHECK(call.error().code == ErrorCode::invalid_argument);
            CHECK_THAT(call.error().message, Catch::Contains("path segment"));
            CHECK(call.error().message.find('\n') == std::string::npos);
        }
        nous::llm::EmbedRequest embed;
        embed.provider = Provider::gemini;
        embed.base_url = "http://127.0.0.1:9";  // nothing listens
        embed.model = model;
        embed.inputs = {"x"};
        auto rows = nous::llm::embed(embed);
        REQUIRE_FALSE(rows);
        CHECK_THAT(rows.error().message, Catch::Contains("path segment"));
    }
    // Every character of the providers' own names is taken: Vertex's Claude
    // versions carry an '@'; OpenAI's formats send the model in the body.
    ChatRequest r = basic(Provider::gemini);
    r.model = "gemini-2.5-flash-preview-05-20";
    CHECK(build_chat_call(r));
    r = basic(Provider::openai);
    r.model = "ft:gpt-4o-mini:org/custom?x";
    CHECK(build_chat_call(r));
}

TEST_CASE("a field the provider does not take is invalid_argument naming it and the provider") {
    struct Case {
        Provider provider;
        std::function<void(ChatRequest&)> set;
        const char* field;
    };
    const std::vector<Case> cases = {
        {Provider::openai_responses, [](ChatRequest& r) { r.stop = {"x"}; }, "stop"},
        {Provider::openai_responses, [](ChatRequest& r) { r.seed = 1; }, "seed"},
        {Provider::anthropic, [](ChatRequest& r) { r.seed = 1; }, "seed"},
        {Provider::gemini,
         [](ChatRequest& r) {
             r.parallel_tool_calls = false;  // with a tool: without, it needs tools first
             r.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
         },
         "parallel_tool_calls"},
        {Provider::anthropic,
         [](ChatRequest& r) {
             r.response_format = ResponseFormat{ResponseFormat::Kind::json_object, "r", "", false};
         },
         "json_object"},
    };
    for (const Case& c : cases) {
        ChatRequest r = basic(c.provider);
        c.set(r);
        auto call = build_chat_call(r);
        INFO(to_string(c.provider) << " " << c.field);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(call.error().message, Catch::Contains(c.field));
        CHECK_THAT(call.error().message, Catch::Contains(std::string(to_string(c.provider))));
    }
}

TEST_CASE("the Responses API's max_output_tokens below 16 is refused before sending") {
    // OpenAI answers it with a 400 ("integer below minimum value. Expected a
    // value >= 16"); the other formats take 1.
    ChatRequest r = basic(Provider::openai_responses);
    r.max_tokens = 15;
    auto call = build_chat_call(r);
    REQUIRE_FALSE(call);
    CHECK(call.error().code == ErrorCode::invalid_argument);
    CHECK(call.error().message ==
          "max_tokens 15: openai-responses takes 16 or more (max_output_tokens)");
    r.max_tokens = 16;
    auto doc = body_of(r);
    CHECK(at(*doc, "/max_output_tokens") == "16");
    for (Provider p : kAll) {
        if (p == Provider::openai_responses) continue;
        INFO(to_string(p));
        ChatRequest one = basic(p);
        one.max_tokens = 1;
        CHECK(build_chat_call(one));
    }
}

TEST_CASE("Anthropic with reasoning on: a temperature but 1, a top_p below 0.95, a forced tool") {
    // Claude's extended thinking takes none of them (a 400 from the API).
    struct Case {
        std::function<void(ChatRequest&)> set;
        const char* says;  ///< nullptr: taken
    };
    const std::vector<Case> cases = {
        {[](ChatRequest& r) { r.temperature = 0.5; },
         "temperature 0.5 is not taken by anthropic with reasoning on: thinking takes 1 only"},
        {[](ChatRequest& r) { r.temperature = 1; }, nullptr},
        {[](ChatRequest& r) { r.top_p = 0.9; },
         "top_p 0.9 is not taken by anthropic with reasoning on: thinking takes 0.95 to 1"},
        {[](ChatRequest& r) { r.top_p = 0.95; }, nullptr},
        {[](ChatRequest& r) { r.tool_choice = ToolChoice::from_name("required"); },
         "a tool_choice that forces a call is not taken by anthropic with reasoning on"},
        {[](ChatRequest& r) { r.tool_choice = ToolChoice::from_name("get_time"); },
         "a tool_choice that forces a call"},
        {[](ChatRequest& r) { r.tool_choice = ToolChoice::from_name("auto"); }, nullptr},
    };
    for (const Case& c : cases) {
        INFO((c.says ? c.says : "taken"));
        ChatRequest r = basic(Provider::anthropic);
        r.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        c.set(r);
        CHECK(build_chat_call(r));  // without reasoning every one is taken
        r.reasoning_effort = ReasoningEffort::low;
        auto call = build_chat_call(r);
        if (!c.says) {
            CHECK(call);
            continue;
        }
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(call.error().message, Catch::Contains(c.says));
    }
}

TEST_CASE("a temperature past the provider's range is refused, and the openai format takes any") {
    // Anthropic takes 0 to 1 and the others 0 to 2 (each answers more with a
    // 400); the openai format also serves vLLM and Ollama, which take more.
    const std::pair<Provider, const char*> ranges[] = {
        {Provider::openai_responses, "2"}, {Provider::anthropic, "1"}, {Provider::gemini, "2"}};
    for (const auto& [p, most] : ranges) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.temperature = std::stod(most);
        CHECK(build_chat_call(r));  // the bound itself is taken
        r.temperature = *r.temperature + 0.01;
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK(call.error().message == "temperature " +
                                          std::string(p == Provider::anthropic ? "1.01" : "2.01") +
                                          " is not taken by " + std::string(to_string(p)) +
                                          ": it takes 0 to " + most + " (refused before sending)");
    }
    ChatRequest vllm = basic(Provider::openai);
    vllm.temperature = 2.5;
    CHECK(build_chat_call(vllm));
}

TEST_CASE("a turn with nothing in it is refused where the provider refuses it") {
    // Anthropic: "all messages must have non-empty content except for the
    // optional final assistant message"; Gemini: "an empty text parameter".
    // OpenAI's formats take an empty message.
    auto conversation = [](Provider p, std::vector<ChatMessage> messages) {
        ChatRequest r = basic(p);
        r.messages = std::move(messages);
        return r;
    };
    for (Provider p : {Provider::anthropic, Provider::gemini}) {
        INFO(to_string(p));
        const std::string says =
            "is empty: " + std::string(to_string(p)) +
            " takes no turn without text, an image, a tool call or a tool result (reasoning "
            "goes back only with its signature)";
        auto refused = [&](ChatRequest r, const std::string& message) {
            auto call = build_chat_call(r);
            REQUIRE_FALSE(call);
            CHECK(call.error().code == ErrorCode::invalid_argument);
            CHECK(call.error().message == message + " " + says);
        };
        refused(conversation(p, {ChatMessage::user("")}), "message 0");
        // No turn at all: a system prompt alone ("messages must have at least
        // one element", "contents is not specified").
        ChatRequest system_only = conversation(p, {ChatMessage("system", "Be brief.")});
        auto none = build_chat_call(system_only);
        REQUIRE_FALSE(none);
        CHECK(none.error().code == ErrorCode::invalid_argument);
        CHECK(none.error().message ==
              "no messages: " + std::string(to_string(p)) +
                  " takes a conversation of one message at least (a system prompt alone is none)");
        refused(conversation(p, {ChatMessage::user("q"), ChatMessage::assistant(""),
                                 ChatMessage::user("r")}),
                "message 1");
        // An empty text part is nothing either; an image is something.
        refused(conversation(p, {ChatMessage::user("", {ContentPart::text_part("")})}),
                "message 0");
        CHECK(build_chat_call(conversation(
            p, {ChatMessage::user("", {ContentPart::image_data("image/png", "iVBORw0KGgo=")})})));
        // A tool call is content, with no text beside it.
        ChatRequest called =
            conversation(p, {ChatMessage::user("q"),
                             ChatMessage::assistant("", {ToolCall{"c1", "get_time", "{}", ""}}),
                             ChatMessage::tool_result("c1", "")});
        called.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        CHECK(build_chat_call(called));
        // An empty message in a turn with content is left out of it: no empty text part.
        auto merged = body_of(conversation(p, {ChatMessage::user("a"), ChatMessage::user("")}));
        const std::string turn = p == Provider::gemini ? at(*merged, "/contents/0/parts")
                                                       : at(*merged, "/messages/0/content");
        CHECK(turn.find(R"("text":"")") == std::string::npos);
        // Reasoning goes back only with its signature (Anthropic's thinking
        // block, Gemini's thoughtSignature): its text alone sends nothing,
        // and Anthropic's redacted blocks have no place in Gemini's turn.
        ChatMessage thought = ChatMessage::assistant("");
        thought.reasoning.text = "Let me think.";
        refused(conversation(p, {ChatMessage::user("q"), thought, ChatMessage::user("r")}),
                "message 1");
        thought.reasoning.redacted = {"UkVE"};
        if (p == Provider::gemini)
            refused(conversation(p, {ChatMessage::user("q"), thought, ChatMessage::user("r")}),
                    "message 1");
        else
            CHECK(build_chat_call(
                conversation(p, {ChatMessage::user("q"), thought, ChatMessage::user("r")})));
        thought.reasoning.signature = "sig";
        CHECK(build_chat_call(
            conversation(p, {ChatMessage::user("q"), thought, ChatMessage::user("r")})));
        // Only Anthropic takes an empty final assistant turn: a prefill.
        ChatRequest prefill = conversation(p, {ChatMessage::user("q"), ChatMessage::assistant("")});
        if (p == Provider::anthropic)
            CHECK(build_chat_call(prefill));
        else
            refused(prefill, "message 1");
    }
    for (Provider p : {Provider::openai, Provider::openai_responses}) {
        INFO(to_string(p));
        CHECK(build_chat_call(conversation(p, {ChatMessage::user("")})));
    }
}

TEST_CASE("Anthropic: text of whitespace alone, and a prefill ending in whitespace, are refused") {
    // "text content blocks must contain non-whitespace text"; "final assistant
    // content cannot end with trailing whitespace". The text is never trimmed.
    auto with = [](std::vector<ChatMessage> messages) {
        ChatRequest r = basic(Provider::anthropic);
        r.messages = std::move(messages);
        return r;
    };
    auto refused = [](const ChatRequest& r, const std::string& says) {
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK(call.error().message == says + " (refused before sending)");
    };
    refused(with({ChatMessage::user(" \n")}),
            "message 0: anthropic takes no text of whitespace alone");
    refused(with({ChatMessage::user("q", {ContentPart::text_part("\t")})}),
            "message 0: anthropic takes no text of whitespace alone");
    refused(with({ChatMessage::user("q"), ChatMessage::assistant("The answer is ")}),
            "message 1: anthropic takes no final assistant turn (a prefill) whose text ends in "
            "whitespace");
    // The system prompt too ("system: text content blocks must contain
    // non-whitespace text"), joined from the request's and its system messages.
    ChatRequest blank_system = with({ChatMessage::user("q")});
    blank_system.system = " \n";
    refused(blank_system, "the system prompt: anthropic takes no text of whitespace alone");
    refused(with({ChatMessage("system", "\t"), ChatMessage::user("q")}),
            "the system prompt: anthropic takes no text of whitespace alone");
    CHECK(build_chat_call(with({ChatMessage("system", "Be brief. "), ChatMessage::user("q")})));
    // And a stop sequence ("each stop sequence must contain non-whitespace"):
    // OpenAI's usual "\n" is refused, not dropped.
    ChatRequest newline_stop = with({ChatMessage::user("q")});
    newline_stop.stop = {"END", "\n"};
    refused(newline_stop, "stop sequence 1: anthropic takes no stop sequence of whitespace alone");
    newline_stop.stop = {"END", "\n\nHuman:"};
    CHECK(build_chat_call(newline_stop));
    // Whitespace inside the text, or ending a turn that is not the last, is text like any other.
    CHECK(build_chat_call(with({ChatMessage::user("  q  "), ChatMessage::assistant("a \n"),
                                ChatMessage::user("r"), ChatMessage::assistant("The answer is")})));
    // An empty text part is no block at all.
    auto body = body_of(with({ChatMessage::user("q", {ContentPart::text_part("")})}));
    CHECK(at(*body, "/messages/0/content") == R"([{"type":"text","text":"q"}])");
    // The other formats take whitespace as text, and as a stop sequence.
    for (Provider p : {Provider::openai, Provider::openai_responses, Provider::gemini}) {
        ChatRequest r = basic(p);
        r.messages = {ChatMessage::user(" ")};
        CHECK(build_chat_call(r));
        if (p == Provider::openai_responses) continue;  // it has no stop sequences
        r.stop = {"\n"};
        CHECK(build_chat_call(r));
    }
}

TEST_CASE(
    "a tool call's id another provider made is sent as this one takes it, call and result alike") {
    // Gemini's calls carry our ids ("call_N_name", a name may hold . and :),
    // and a router fails over across providers: OpenAI chat takes ids of 40
    // bytes at most, the Responses API 64, Anthropic ^[a-zA-Z0-9_-]+$.
    const std::string long_dotted = "call_0_tools.search_the_web_for_recent_news_today";  // 49
    struct Case {
        Provider provider;
        const char* call_id;
        const char* result_id;
        bool kept;  ///< the id fits the format as it is
    };
    const Case cases[] = {
        {Provider::openai, "/messages/1/tool_calls/0/id", "/messages/2/tool_call_id", false},
        {Provider::openai_responses, "/input/1/call_id", "/input/2/call_id", true},
        {Provider::anthropic, "/messages/1/content/0/id", "/messages/2/content/0/tool_use_id",
         false},
    };
    for (const Case& c : cases) {
        INFO(to_string(c.provider));
        ChatRequest r = with_call(c.provider, ToolCall{long_dotted, "get_time", "{}", ""});
        r.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        auto doc = body_of(r);
        const std::string call = at(*doc, c.call_id), result = at(*doc, c.result_id);
        CHECK(call == result);
        if (c.kept) {
            CHECK(call == "\"" + long_dotted + "\"");
            continue;
        }
        // "call_" and 16 hex digits, the same for the same id on every request.
        REQUIRE(call.size() == 2 + 21);
        CHECK(call.starts_with("\"call_"));
        CHECK(call.find_first_not_of("0123456789abcdef", 6) == call.size() - 1);
        CHECK(at(*body_of(r), c.call_id) == call);
        // An id that fits is sent as it is.
        ChatRequest plain = with_call(c.provider, ToolCall{"call_abc-123", "get_time", "{}", ""});
        plain.tools = r.tools;
        CHECK(at(*body_of(plain), c.call_id) == R"("call_abc-123")");
    }
    // The file shape (--messages, --json) keeps the caller's id.
    ChatMessage assistant =
        ChatMessage::assistant("", {ToolCall{long_dotted, "get_time", "{}", ""}});
    CHECK(message_to_json(assistant).find(long_dotted) != std::string::npos);
}

TEST_CASE("an image's data: URL that is not one, or data that is not base64, is refused") {
    auto with_image = [](Provider p, ContentPart image) {
        ChatRequest r = basic(p);
        r.messages = {ChatMessage::user("what is it?", {std::move(image)})};
        return r;
    };
    for (Provider p : kAll) {
        INFO(to_string(p));
        for (const char* url :
             {"data:", "data:image/png,iVBORw0KGgo=", "DATA:image/png;base64,x"}) {
            auto call = build_chat_call(with_image(p, ContentPart::image(url)));
            REQUIRE_FALSE(call);
            CHECK(call.error().message ==
                  "message 0: an image's data: URL must be data:MEDIA_TYPE;base64,DATA");
        }
        for (const char* data : {"!!!!", "iVBORw0KGgo=A", "iVBO=w0K", "a"}) {
            INFO(data);
            auto call = build_chat_call(with_image(p, ContentPart::image_data("image/png", data)));
            REQUIRE_FALSE(call);
            CHECK(call.error().message == "message 0: an image's data is not base64");
        }
        for (const char* data : {"iVBORw0KGgo=", "iVBORw0KGg==", "iVBORw0KGgo", "+/9z"})
            CHECK(build_chat_call(with_image(p, ContentPart::image_data("image/png", data))));
    }
    // Anthropic's image source takes jpeg, png, gif and webp; Gemini takes
    // other media in inlineData.
    auto text_file = with_image(Provider::anthropic, ContentPart::image_data("text/plain", "aGk="));
    auto refused = build_chat_call(text_file);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("an image of type 'text/plain'"));
    CHECK(build_chat_call(
        with_image(Provider::anthropic, ContentPart::image_data("image/webp", "aGk="))));
    CHECK(build_chat_call(
        with_image(Provider::gemini, ContentPart::image_data("text/plain", "aGk="))));
}

TEST_CASE("a tool offered twice, or whose arguments are not an object, is refused") {
    const ToolSpec weather{"get_weather", "the weather", R"({"type":"object","properties":{}})"};
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest twice = basic(p);
        twice.tools = {weather, {"get_time", "the time", R"({"type":"object"})"}, weather};
        auto call = build_chat_call(twice);
        REQUIRE_FALSE(call);
        CHECK(call.error().message ==
              "tool 'get_weather' is offered twice: tool names must be unique");
        ChatRequest scalar = basic(p);
        scalar.tools = {{"f", "d", R"({"type":"string"})"}};
        call = build_chat_call(scalar);
        REQUIRE_FALSE(call);
        CHECK(call.error().message == "tool 'f': parameters_schema must be of type object");
        // A schema without a type (OpenAI's "no parameters"): Anthropic's
        // InputSchema requires the type, said for it; the others take it as it is.
        ChatRequest untyped = basic(p);
        untyped.tools = {{"f", "d", R"({"properties":{}})"}};
        auto doc = body_of(untyped);
        if (p == Provider::anthropic)
            CHECK(at(*doc, "/tools/0/input_schema") == R"({"type":"object","properties":{}})");
        else if (p == Provider::gemini)
            CHECK(at(*doc, "/tools/0/functionDeclarations/0/parametersJsonSchema") ==
                  R"({"properties":{}})");
        else
            CHECK(at(*doc, p == Provider::openai
                               ? "/tools/0/function/parameters"
                               : "/tools/0/parameters") == R"({"properties":{}})");
    }
}

TEST_CASE("a tool call without its result, or a result without its call, is refused") {
    // Each provider answers either gap with a 400; OpenAI chat also wants the
    // results right after the call, Anthropic's tool_result blocks first in
    // their message. The Responses API may hold the call on the server.
    const ToolSpec weather{"get_weather", "the weather", R"({"type":"object","properties":{}})"};
    auto call = [](const char* id) {
        return ChatMessage::assistant("", {ToolCall{id, "get_weather", "{}", ""}});
    };
    auto with = [&](Provider p, std::vector<ChatMessage> messages) {
        ChatRequest r = basic(p);
        r.tools = {weather};
        r.messages = std::move(messages);
        return r;
    };
    auto says = [](const ChatRequest& r) {
        auto built = build_chat_call(r);
        return built ? std::string("taken") : built.error().message;
    };
    for (Provider p : kAll) {
        INFO(to_string(p));
        const bool responses = p == Provider::openai_responses;
        CHECK(says(with(p, {ChatMessage::user("q"), call("c1"), ChatMessage::user("next")})) ==
              "message 1: tool call 'c1' has no result in the turn after it");
        CHECK(says(with(p, {ChatMessage::user("q"), call("c1")})) ==
              "message 1: tool call 'c1' has no result in the turn after it");
        CHECK(says(with(p, {ChatMessage::user("q"), ChatMessage::tool_result("c9", "sunny")})) ==
              (responses ? "taken"
                         : "message 1: the tool result for 'c9' answers no call of the "
                           "turn before it"));
        CHECK(says(with(p, {ChatMessage::user("q"), call("c1"), ChatMessage::tool_result("c2", "x"),
                            ChatMessage::tool_result("c1", "sunny")})) ==
              (responses ? "taken"
                         : "message 2: the tool result for 'c2' answers no call of the "
                           "turn before it"));
        const bool results_first = p == Provider::openai || p == Provider::anthropic;
        CHECK(says(with(p, {ChatMessage::user("q"), call("c1"), ChatMessage::user("note"),
                            ChatMessage::tool_result("c1", "sunny")})) ==
              (results_first ? "message 3: the tool result for 'c1' comes after other messages of "
                               "its turn: the results must come first after the calls"
                             : "taken"));
        CHECK(says(with(
                  p, {ChatMessage::user("q"), call("c1"), ChatMessage::tool_result("c1", "sunny"),
                      ChatMessage::user("and now?")})) == "taken");
    }
}

TEST_CASE("an empty stop sequence is refused, in every format") {
    for (Provider p : kAll) {
        if (p == Provider::openai_responses) continue;  // it has no stop sequences
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.stop = {"END", ""};
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK(call.error().message == "stop sequence 1 is empty");
        r.stop = {"END", " x"};
        CHECK(build_chat_call(r));
    }
}

TEST_CASE("tool_choice naming no offered tool, or any tool_choice without tools, is refused") {
    ChatRequest r = basic(Provider::openai);
    r.tool_choice = ToolChoice::from_name("missing");
    CHECK_FALSE(build_chat_call(r));
    // Without tools OpenAI refuses even auto and none, and Converse has no
    // place to write them: refused in every format, nothing dropped.
    for (Provider p : kAll) {
        for (const char* mode : {"required", "auto", "none"}) {
            INFO(to_string(p) << " " << mode);
            ChatRequest bare = basic(p);
            bare.tool_choice = ToolChoice::from_name(mode);
            auto call = build_chat_call(bare);
            REQUIRE_FALSE(call);
            CHECK(call.error().code == ErrorCode::invalid_argument);
            CHECK(call.error().message == std::string("tool_choice ") + mode + " needs tools");
            bare.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
            CHECK(build_chat_call(bare));
        }
    }
}

TEST_CASE("parallel_tool_calls without tools is refused, as OpenAI refuses it") {
    for (Provider p : {Provider::openai, Provider::openai_responses, Provider::anthropic}) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.parallel_tool_calls = false;
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK(call.error().message == "parallel_tool_calls needs tools");
        r.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        CHECK(build_chat_call(r));
    }
}

TEST_CASE("extra_body is merged last, member by member, and one that is not an object is refused") {
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.extra_body = R"({"service_tier":"flex","model":"other","guided_json":{"type":"object"}})";
        auto doc = body_of(r);
        CHECK(at(*doc, "/service_tier") == R"("flex")");
        CHECK(at(*doc, "/guided_json") == R"({"type":"object"})");
        if (p != Provider::gemini) CHECK(at(*doc, "/model") == R"("other")");  // replaced
        r.extra_body = "[1]";
        auto refused = build_chat_call(r);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("extra_body"));
    }
}

TEST_CASE("a response schema goes in each provider's own field") {
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.response_format =
            ResponseFormat{ResponseFormat::Kind::json_schema, "weather", kSchema, true};
        auto doc = body_of(r);
        const std::string schema = at(*nous::http::parse_json(kSchema).value(), "");
        switch (p) {
            case Provider::openai:
            case Provider::azure:
                CHECK(at(*doc, "/response_format/type") == R"("json_schema")");
                CHECK(at(*doc, "/response_format/json_schema/name") == R"("weather")");
                CHECK(at(*doc, "/response_format/json_schema/strict") == "true");
                CHECK(at(*doc, "/response_format/json_schema/schema") == schema);
                break;
            case Provider::openai_responses:
            case Provider::azure_responses:
                CHECK(at(*doc, "/text/format/type") == R"("json_schema")");
                CHECK(at(*doc, "/text/format/name") == R"("weather")");
                CHECK(at(*doc, "/text/format/schema") == schema);
                break;
            case Provider::anthropic:
                CHECK(at(*doc, "/output_config/format/type") == R"("json_schema")");
                CHECK(at(*doc, "/output_config/format/schema") == schema);
                break;
            case Provider::gemini:
                CHECK(at(*doc, "/generationConfig/responseMimeType") == R"("application/json")");
                CHECK(at(*doc, "/generationConfig/responseJsonSchema") == schema);
                break;
            case Provider::bedrock:  // their own tests: bedrock_test.cpp, vertex_test.cpp
            case Provider::vertex:
            case Provider::vertex_anthropic:
                FAIL("the platforms are not among kAll");
                break;
        }
    }
    ChatRequest plain = basic(Provider::openai);
    plain.response_format = ResponseFormat{ResponseFormat::Kind::json_object, "r", "", false};
    CHECK(at(*body_of(plain), "/response_format") == R"({"type":"json_object"})");
    plain.provider = Provider::gemini;
    CHECK(at(*body_of(plain), "/generationConfig/responseMimeType") == R"("application/json")");
    CHECK(at(*body_of(plain), "/generationConfig/responseJsonSchema") == "<absent>");
}

// ---- the schema dialects ------------------------------------------------------------

TEST_CASE(
    "a schema the provider would refuse is invalid_argument naming the pointer and the rule") {
    struct Case {
        Provider provider;
        const char* schema;
        const char* words;
        bool strict = true;
    };
    const std::vector<Case> cases = {
        {Provider::openai,
         R"({"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{}}}},"required":["items"],"additionalProperties":false})",
         "/properties/items/items: additionalProperties must be false in strict mode"},
        {Provider::openai_responses,
         R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false})",
         "(root): property \"b\" must be listed in required in strict mode"},
        {Provider::openai,
         R"({"type":"object","properties":{"a":{"type":"string","minLength":2}},"required":["a"],"additionalProperties":false})",
         "/properties/a: minLength is not supported in strict mode"},
        {Provider::openai, R"({"anyOf":[{"type":"object"}]})",
         "(root): the root must be an object schema in strict mode"},
        {Provider::anthropic,
         R"({"type":"object","properties":{"n":{"type":"integer","minimum":1}},"additionalProperties":false})",
         "/properties/n: minimum is not supported by Anthropic structured outputs"},
        {Provider::anthropic, R"({"type":"object","properties":{}})",
         "(root): additionalProperties must be false for Anthropic structured outputs"},
        {Provider::gemini, R"({"type":"object","properties":{"x":{"allOf":[{"type":"string"}]}}})",
         "/properties/x: allOf is not supported by Gemini's responseJsonSchema"},
    };
    for (const Case& c : cases) {
        INFO(to_string(c.provider) << " " << c.schema);
        ChatRequest r = basic(c.provider);
        r.response_format =
            ResponseFormat{ResponseFormat::Kind::json_schema, "r", c.schema, c.strict};
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK_THAT(call.error().message, Catch::Contains(c.words));
    }
    // strict false: the OpenAI formats check no dialect.
    ChatRequest loose = basic(Provider::openai);
    loose.response_format =
        ResponseFormat{ResponseFormat::Kind::json_schema, "r", R"({"type":"object"})", false};
    CHECK(build_chat_call(loose));
    loose.response_format->schema = "not json";
    CHECK_FALSE(build_chat_call(loose));
}

// ---- the incremental JSON reader ----------------------------------------------------

namespace {

bool valid_utf8(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80         ? 1
                              : (c >> 5) == 6  ? 2
                              : (c >> 4) == 14 ? 3
                              : (c >> 3) == 30 ? 4
                                               : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        i += n;
    }
    return true;
}

bool strings_valid(const JsonValue& v) {
    if (!valid_utf8(v.string)) return false;
    for (const auto& e : v.elements)
        if (!strings_valid(e)) return false;
    for (const auto& [k, m] : v.members)
        if (!valid_utf8(k) || !strings_valid(m)) return false;
    return true;
}

/// A partial value's text with what may still grow stripped from its end:
/// closing brackets and the quote of an open string.
std::string growable(std::string s) {
    while (!s.empty() && (s.back() == '}' || s.back() == ']' || s.back() == '"')) s.pop_back();
    return s;
}

/// Feeds `text` cut at `cuts`; checks after each piece that the partial
/// value extends the one before and holds only whole text; returns the final
/// value's JSON (or "error: ...").
std::string read_in_pieces(const std::string& text, const std::vector<std::size_t>& cuts) {
    PartialJson reader;
    std::string before;
    std::size_t pos = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : text.size();
        if (!reader.feed(std::string_view(text).substr(pos, end - pos)))
            return "error: " + reader.error();
        pos = end;
        const std::string now = reader.value().to_json();
        INFO("before " << before << " now " << now);
        CHECK(now.rfind(growable(before), 0) == 0);  // extends the one before
        CHECK(strings_valid(reader.value()));
        // Nothing yet reads as null: the value has not started.
        const bool started = reader.complete() || reader.value().type != JsonValue::Type::null;
        before = started ? now : "";
    }
    if (!reader.finish()) return "error: " + reader.error();
    return reader.value().to_json();
}

/// Whole, byte by byte, and at random splits: the same result each way.
std::string read_every_way(const std::string& text) {
    const std::string whole = read_in_pieces(text, {});
    std::vector<std::size_t> bytes;
    for (std::size_t i = 1; i < text.size(); ++i) bytes.push_back(i);
    CHECK(read_in_pieces(text, bytes) == whole);
    std::mt19937 random(static_cast<unsigned>(text.size()));
    for (int round = 0; round < 20; ++round) {
        std::vector<std::size_t> cuts;
        for (std::size_t i = 1; i < text.size(); ++i)
            if (random() % 4 == 0) cuts.push_back(i);
        CHECK(read_in_pieces(text, cuts) == whole);
    }
    return whole;
}

}  // namespace

TEST_CASE("the incremental reader: every fixture whole, byte by byte and at random splits") {
    struct Fixture {
        std::string text, expected;
    };
    const std::vector<Fixture> fixtures = {
        {R"({"city":"Paris","days":3,"tags":["sun","rain"]})",
         R"({"city":"Paris","days":3,"tags":["sun","rain"]})"},
        {R"(  { "a" : [ 1 , -2.5e3 , true , false , null , { } , [ ] ] }  )",
         R"({"a":[1,-2.5e3,true,false,null,{},[]]})"},
        {R"({"esc":"quote \" slash \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00"})",
         "{\"esc\":\"quote \\\" slash \\\\ / \\u0008\\u000c\\n\\r\\t \xc3\xa9 \xf0\x9f\x98\x80\"}"},
        {"{\"raw\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
         "{\"raw\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}"},
        {"[[[[[[1]]]]]]", "[[[[[[1]]]]]]"},
        {"\"just a string\"", "\"just a string\""},
        {"12345", "12345"},
        {"0.5", "0.5"},
        {"{\"a\":1,}", "error"},
        {"{\"a\" 1}", "error"},
        {"[1 2]", "error"},
        {"{\"a\":01}", "error"},
        {"\"\\ud83d x\"", "error"},
        {"\"tab\there\"", "error"},
        {"tru", "error"},
        {"{\"a\":1} x", "error"},
        {"1e400", "error"},
        // A number past a double's range, and the edge where the whole-document
        // reader's rounding decides: the two readers give one verdict.
        {"[1.8e308]", "error"},
        {"1.7976931348623158e308", "error"},
        {"0e400", "error"},
        {"[1.7976931348623157e308]", "[1.7976931348623157e308]"},
        {"", "error"},
    };
    for (const auto& f : fixtures) {
        INFO(f.text);
        const std::string got = read_every_way(f.text);
        if (f.expected == "error")
            CHECK(got.rfind("error: ", 0) == 0);
        else
            CHECK(got == f.expected);
    }
}

TEST_CASE("partial values: members as far as they arrived, numbers only once complete") {
    PartialJson reader;
    REQUIRE(reader.feed(R"({"name":"Ad)"));
    CHECK(reader.value().to_json() == R"({"name":"Ad"})");
    REQUIRE(reader.feed(R"(a","age":4)"));
    CHECK(reader.value().to_json() == R"({"name":"Ada"})");  // 4 may become 42
    REQUIRE(reader.feed(R"(2,"langs":["en)"));
    CHECK(reader.value().to_json() == R"({"name":"Ada","age":42,"langs":["en"]})");
    REQUIRE(reader.feed(R"(\u00)"));  // half an escape: not shown
    CHECK(reader.value().to_json() == R"({"name":"Ada","age":42,"langs":["en"]})");
    REQUIRE(reader.feed(R"(e9"],"ok":tr)"));
    CHECK(reader.value().to_json() == "{\"name\":\"Ada\",\"age\":42,\"langs\":[\"en\xc3\xa9\"]}");
    CHECK_FALSE(reader.complete());
    REQUIRE(reader.feed("ue}"));
    CHECK(reader.complete());
    CHECK(reader.finish());
    CHECK(reader.value().member("ok")->boolean);
}

TEST_CASE("nesting past 256 is an error, never a crash") {
    PartialJson reader;
    CHECK_FALSE(reader.feed(std::string(200000, '[')));
    CHECK_THAT(reader.error(), Catch::Contains("nested deeper"));
}

// ---- the final value against its schema ---------------------------------------------

TEST_CASE("the final value is checked: type, required, additionalProperties, items, enum, const") {
    auto parse = [](const std::string& text) {
        PartialJson reader;
        REQUIRE(reader.feed(text));
        REQUIRE(reader.finish());
        return reader.value();
    };
    CHECK_FALSE(
        validate_against_schema(parse(R"({"city":"Paris","days":3,"tags":["sun"]})"), kSchema));
    struct Case {
        const char* value;
        const char* pointer;
        const char* expected;
    };
    const std::vector<Case> cases = {
        {R"({"city":7,"days":3,"tags":[]})", "/city", "type string"},
        {R"({"city":"P","days":3.5,"tags":[]})", "/days", "type integer"},
        {R"({"city":"P","tags":[]})", "", "member \"days\" (required)"},
        {R"({"city":"P","days":1,"tags":[],"x":1})", "/x", "additionalProperties is false"},
        {R"({"city":"P","days":1,"tags":["snow"]})", "/tags/0", "one of [\"sun\",\"rain\"]"},
        {R"([1])", "", "type object"},
    };
    for (const Case& c : cases) {
        INFO(c.value);
        auto bad = validate_against_schema(parse(c.value), kSchema);
        REQUIRE(bad);
        CHECK(bad->pointer == c.pointer);
        CHECK_THAT(bad->expected, Catch::Contains(c.expected));
    }
    auto constant =
        validate_against_schema(parse(R"({"v":2})"), R"({"properties":{"v":{"const":1}}})");
    REQUIRE(constant);
    CHECK(constant->message() == "/v: expected the constant 1");
    CHECK_FALSE(validate_against_schema(
        parse(R"({"p":{"x":1}})"),
        R"({"$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}}}},"properties":{"p":{"$ref":"#/$defs/P"}}})"));
}

// ---- usage that means the same for every provider -----------------------------------

TEST_CASE("usage means the same for every provider, streamed and not") {
    auto streamed = [](Provider p, std::vector<nous::http::Event> events) {
        DeltaParser parser(p);
        Accumulator acc;
        std::vector<Delta> deltas;
        for (const auto& e : events) {
            deltas.clear();
            REQUIRE_FALSE(parser.parse(e, deltas));
            for (const auto& d : deltas) acc.add(d);
        }
        return acc.result().usage.value_or(Usage{});
    };
    auto event = [](std::string type, std::string data) {
        nous::http::Event e;
        e.type = std::move(type);
        e.data = std::move(data);
        return e;
    };
    SECTION("Anthropic: input counts the cache reads and writes, and they are kept apart") {
        const Usage u = streamed(
            Provider::anthropic,
            {event(
                 "message_start",
                 R"({"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":1}}})"),
             event(
                 "message_delta",
                 R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":50}})"),
             event("message_stop", R"({"type":"message_stop"})")});
        CHECK(u.input_tokens == 1210);
        CHECK(u.cached_input_tokens == 1000);
        CHECK(u.cache_write_input_tokens == 200);
        CHECK(u.output_tokens == 50);
        auto whole = parse_chat_response(
            Provider::anthropic,
            R"({"type":"message","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":50,"output_tokens_details":{"thinking_tokens":20}}})");
        REQUIRE(whole);
        CHECK(whole->usage->input_tokens == 1210);
        CHECK(whole->usage->cached_input_tokens == 1000);
        CHECK(whole->usage->cache_write_input_tokens == 200);
        CHECK(whole->usage->reasoning_tokens == 20);
    }
    SECTION("Gemini: output counts the thoughts") {
        const std::string chunk =
            R"({"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":30,"thoughtsTokenCount":70,"cachedContentTokenCount":4}})";
        const Usage u = streamed(Provider::gemini, {event("message", chunk)});
        CHECK(u.input_tokens == 12);
        CHECK(u.output_tokens == 100);
        CHECK(u.reasoning_tokens == 70);
        CHECK(u.cached_input_tokens == 4);
        CHECK(u.cache_write_input_tokens == 0);
        auto whole = parse_chat_response(Provider::gemini, chunk);
        REQUIRE(whole);
        CHECK(whole->usage->output_tokens == 100);
    }
    SECTION("OpenAI: as reported (its counts already include cache and reasoning)") {
        const Usage u = streamed(
            Provider::openai,
            {event(
                "message",
                R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":10}}})")});
        CHECK(u.input_tokens == 100);
        CHECK(u.cached_input_tokens == 60);
        CHECK(u.output_tokens == 40);
        CHECK(u.reasoning_tokens == 10);
        CHECK(u.cache_write_input_tokens == 0);
    }
}

// ---- against the mock -----------------------------------------------------------------

namespace {

ChatRequest against(const MockServer& server, Provider p, bool stream) {
    ChatRequest r = basic(p);
    r.stream = stream;
    r.base_url = server.base_url() + (p == Provider::gemini ? "/v1beta" : "/v1");
    return r;
}

nous::http::Options quiet() {
    nous::http::Options o;
    o.max_retries = 0;
    return o;
}

}  // namespace

TEST_CASE(
    "the mock answers a structured request with a value valid against the schema, in "
    "small deltas, and its faults in every format") {
    MockServer server;
    server.start();
    for (Provider p : kAll) {
        for (bool stream : {true, false}) {
            INFO(to_string(p) << (stream ? " streamed" : " whole"));
            ChatRequest r = against(server, p, stream);
            r.response_format =
                ResponseFormat{ResponseFormat::Kind::json_schema, "weather", kSchema, true};
            int deltas = 0;
            auto ok = run_chat(r, quiet(), [&](const Delta& d) {
                deltas += !d.text.empty();
                return true;
            });
            REQUIRE(ok);
            CHECK_FALSE(ok->output_error);
            REQUIRE(ok->parsed);
            CHECK_FALSE(validate_against_schema(*ok->parsed, kSchema));
            if (stream) CHECK(deltas > 5);  // small deltas
            CHECK_THAT(to_json(ok.value()), Catch::Contains(R"("parsed":{"city":)"));

            r.headers = {{"x-mock-fault", "schema_violation"}};
            auto broken = run_chat(r, quiet());
            REQUIRE(broken);
            REQUIRE(broken->output_error);
            CHECK(broken->output_error->kind == OutputError::Kind::schema);
            CHECK(broken->output_error->pointer == "/city");
            CHECK_FALSE(broken->text.empty());  // the text is kept
            CHECK_THAT(to_json(broken.value()), Catch::Contains(R"("parsed":null)"));

            r.headers = {{"x-mock-fault", "refusal"}};
            auto refused = run_chat(r, quiet());
            REQUIRE(refused);
            REQUIRE(refused->output_error);
            if (p == Provider::gemini) {
                CHECK(refused->output_error->kind == OutputError::Kind::not_json);
            } else {
                CHECK(refused->output_error->kind == OutputError::Kind::refusal);
                REQUIRE(refused->refusal);
                CHECK(refused->text.empty());  // a refusal is never text
            }
        }
    }
}

TEST_CASE("the mock honours tool_choice and stop sequences in every format") {
    MockServer server;
    server.start();
    for (Provider p : kAll) {
        for (bool stream : {true, false}) {
            INFO(to_string(p) << (stream ? " streamed" : " whole"));
            ChatRequest r = against(server, p, stream);
            r.tools = {ToolSpec{"first", "", R"({"type":"object","properties":{}})"},
                       ToolSpec{"second", "", R"({"type":"object","properties":{}})"}};
            r.tool_choice = ToolChoice::from_name("second");
            auto named = run_chat(r, quiet());
            REQUIRE(named);
            REQUIRE(named->tool_calls.size() == 1);
            CHECK(named->tool_calls[0].name == "second");
            r.tool_choice = ToolChoice::from_name("none");
            auto none = run_chat(r, quiet());
            REQUIRE(none);
            CHECK(none->tool_calls.empty());
            r.tool_choice = ToolChoice::from_name("required");
            auto required = run_chat(r, quiet());
            REQUIRE(required);
            REQUIRE(required->tool_calls.size() == 1);
            CHECK(required->tool_calls[0].name == "first");
            if (p == Provider::openai_responses) continue;  // no stop sequences there
            ChatRequest s = against(server, p, stream);
            s.stop = {" mock"};
            auto stopped = run_chat(s, quiet());
            REQUIRE(stopped);
            CHECK(stopped->text == "Hello from the nous-http");
            if (p == Provider::anthropic) CHECK(stopped->finish_reason == "stop_sequence");
        }
    }
}

// ---- findings of the structured-output review -----------------------------------------

TEST_CASE("extra_body merges objects recursively: Gemini's generationConfig keeps our schema") {
    ChatRequest gemini = basic(Provider::gemini);
    ResponseFormat format;
    format.schema = kSchema;
    gemini.response_format = format;
    gemini.temperature = 0.5;
    gemini.extra_body = R"({"generationConfig":{"topK":5},"safetySettings":[]})";
    auto g = body_of(gemini);
    CHECK(at(*g, "/generationConfig/topK") == "5");
    CHECK(at(*g, "/generationConfig/responseMimeType") == "\"application/json\"");
    CHECK(at(*g, "/generationConfig/responseJsonSchema") != "<absent>");
    CHECK(at(*g, "/generationConfig/temperature") == "0.5");
    CHECK(at(*g, "/safetySettings") == "[]");
    // OpenAI: stream_options in extra_body adds to ours, include_usage stays.
    ChatRequest openai = basic(Provider::openai);
    openai.stream = true;
    openai.extra_body = R"({"stream_options":{"include_obfuscation":false}})";
    auto o = body_of(openai);
    CHECK(at(*o, "/stream_options/include_usage") == "true");
    CHECK(at(*o, "/stream_options/include_obfuscation") == "false");
    // Any other value replaces ours, an object ours is not included.
    openai.extra_body = R"({"stream_options":null,"messages":[{"role":"user","content":"x"}]})";
    auto replaced = body_of(openai);
    CHECK(at(*replaced, "/stream_options") == "null");
    CHECK(at(*replaced, "/messages/0/content") == "\"x\"");
}

namespace {

JsonValue parsed(const std::string& text) {
    PartialJson reader;
    REQUIRE(reader.feed(text));
    REQUIRE(reader.finish());
    return reader.value();
}

}  // namespace

TEST_CASE("const and enum compare numbers by value: integers past 2^53 that differ are refused") {
    CHECK(validate_against_schema(parsed("9007199254740992"), R"({"const":9007199254740993})"));
    CHECK_FALSE(
        validate_against_schema(parsed("9007199254740993"), R"({"const":9007199254740993})"));
    CHECK(validate_against_schema(parsed("12345678901234567890"),
                                  R"({"enum":[12345678901234567891]})"));
    CHECK_FALSE(validate_against_schema(parsed("1.0"), R"({"const":1})"));
    CHECK_FALSE(validate_against_schema(parsed("10e-1"), R"({"enum":[2,1]})"));
    CHECK_FALSE(validate_against_schema(parsed("-0"), R"({"const":0})"));
    CHECK_FALSE(validate_against_schema(parsed("0.1"), R"({"const":0.1})"));
    CHECK(validate_against_schema(parsed("0.1000000000000000001"), R"({"const":0.1})"));
    CHECK(validate_against_schema(parsed("[1,2]"), R"({"const":[1,3]})"));
}

TEST_CASE(
    "a valid 200-level tree under a recursive schema is valid: the cap counts the value's depth") {
    const std::string schema =
        R"({"$defs":{"node":{"anyOf":[{"type":"object","properties":{"child":{"$ref":"#/$defs/node"}},)"
        R"("required":["child"],"additionalProperties":false},{"type":"null"}]}},"$ref":"#/$defs/node"})";
    std::string tree = "null";
    for (int i = 0; i < 200; ++i) tree = R"({"child":)" + tree + "}";
    CHECK_FALSE(validate_against_schema(parsed(tree), schema));
    std::string broken = "1";  // the same depth, a leaf the schema refuses
    for (int i = 0; i < 200; ++i) broken = R"({"child":)" + broken + "}";
    CHECK(validate_against_schema(parsed(broken), schema));
}

TEST_CASE("anyOf over shared $refs costs each definition once, not 2^n") {
    // d0 = anyOf[d1, d1], d1 = anyOf[d2, d2] ... d29: 2^30 paths without memo.
    std::string defs;
    for (int i = 0; i < 30; ++i)
        defs += "\"d" + std::to_string(i) + R"(":{"anyOf":[{"$ref":"#/$defs/d)" +
                std::to_string(i + 1) + R"("},{"$ref":"#/$defs/d)" + std::to_string(i + 1) +
                R"("}]},)";
    const std::string schema =
        R"({"$defs":{)" + defs + R"("d30":{"type":"string"}},"$ref":"#/$defs/d0"})";
    CHECK_FALSE(validate_against_schema(parsed(R"("ok")"), schema));
    auto refused = validate_against_schema(parsed("3"), schema);
    REQUIRE(refused);
    CHECK(refused->expected == "a value matching one of anyOf");
}

// ---- the request bodies as the providers' own types spell them -----------------------

namespace {

ToolSpec weather_tool(bool strict) {
    ToolSpec t{"get_weather", "The weather",
               R"({"type":"object","properties":{"city":{"type":"string"}},)"
               R"("required":["city"],"additionalProperties":false})"};
    t.strict = strict;
    return t;
}

std::string header_of(const HttpCall& call, const std::string& name) {
    for (const auto& [k, v] : call.headers)
        if (k == name) return v;
    return "<absent>";
}

}  // namespace

TEST_CASE(
    "Gemini tools carry JSON Schema in parametersJsonSchema, and a call round trip keeps its "
    "parts") {
    ChatRequest r = basic(Provider::gemini);
    r.tools = {weather_tool(false)};
    ChatMessage call = ChatMessage::assistant("");
    ToolCall weather;
    weather.id = "call_1";
    weather.name = "get_weather";
    weather.arguments = R"({"city":"Paris"})";
    weather.signature = "c2ln";
    call.tool_calls = {weather};
    r.messages.push_back(call);
    r.messages.push_back(ChatMessage::tool_result("call_1", R"({"c":18})"));
    auto body = body_of(r);
    CHECK(at(*body, "/tools/0/functionDeclarations/0/parametersJsonSchema/additionalProperties") ==
          "false");
    CHECK(at(*body, "/tools/0/functionDeclarations/0/parameters") == "<absent>");
    CHECK(at(*body, "/contents/1/parts/0/functionCall/name") == "\"get_weather\"");
    CHECK(at(*body, "/contents/1/parts/0/thoughtSignature") == "\"c2ln\"");
    CHECK(at(*body, "/contents/2/parts/0/functionResponse/name") == "\"get_weather\"");
    // Gemini has no strict: a strict tool is refused, never sent as if not.
    r.tools[0].strict = true;
    auto refused = build_chat_call(r);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(refused.error().message, Catch::Contains("strict"));
}

TEST_CASE("a tool's strict is always written where the format has it, and checked when true") {
    for (Provider p : {Provider::openai, Provider::openai_responses, Provider::anthropic}) {
        INFO(std::string(to_string(p)));
        const char* strict_at =
            p == Provider::openai ? "/tools/0/function/strict" : "/tools/0/strict";
        ChatRequest r = basic(p);
        r.tools = {weather_tool(false)};
        CHECK(at(*body_of(r), strict_at) == "false");  // the Responses API takes none as true
        r.tools = {weather_tool(true)};
        CHECK(at(*body_of(r), strict_at) == "true");
        // An ordinary schema (an optional property, no additionalProperties:
        // false) is fine non-strict and refused strict, naming the tool.
        r.tools[0].parameters_schema =
            R"({"type":"object","properties":{"city":{"type":"string"}}})";
        auto refused = build_chat_call(r);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("tool 'get_weather'"));
        r.tools[0].strict = false;
        CHECK(build_chat_call(r));
    }
}

TEST_CASE(
    "an image to the Responses API carries detail auto unless set, and Anthropic and Gemini refuse "
    "one") {
    ChatRequest r = basic(Provider::openai_responses);
    r.messages = {ChatMessage::user("look", {ContentPart::image("https://example.com/a.png")})};
    CHECK(at(*body_of(r), "/input/0/content/1/detail") == "\"auto\"");
    r.messages[0].parts[0].detail = "high";
    CHECK(at(*body_of(r), "/input/0/content/1/detail") == "\"high\"");
    r.provider = Provider::openai;
    CHECK(at(*body_of(r), "/messages/0/content/1/image_url/detail") == "\"high\"");
    for (Provider p : {Provider::anthropic, Provider::gemini}) {
        r.provider = p;
        auto refused = build_chat_call(r);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("detail"));
    }
    r.provider = Provider::openai;
    r.messages[0].parts[0].detail = "huge";
    CHECK_FALSE(build_chat_call(r));
}

TEST_CASE(
    "the Anthropic API version is a request setting, and 2026-10-21 has no temperature or top_p") {
    ChatRequest r = basic(Provider::anthropic);
    r.temperature = 0.5;
    auto old = build_chat_call(r);
    REQUIRE(old);
    CHECK(header_of(old.value(), "anthropic-version") == "2023-06-01");
    r.anthropic_version = "2026-10-21";
    auto refused = build_chat_call(r);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(refused.error().message, Catch::Contains("temperature"));
    r.temperature.reset();
    r.top_p = 0.9;
    CHECK_FALSE(build_chat_call(r));
    r.top_p.reset();
    auto current = build_chat_call(r);
    REQUIRE(current);
    CHECK(header_of(current.value(), "anthropic-version") == "2026-10-21");
    r.anthropic_version = "latest";
    CHECK_FALSE(build_chat_call(r));
    // Read by Anthropic alone: another format's call is as it was.
    r.provider = Provider::openai;
    CHECK(build_chat_call(r));
}

TEST_CASE(
    "a message's text parts go where its text goes, and an image no format carries is "
    "refused") {
    const ContentPart image = ContentPart::image_data("image/png", "iVBORw0KGgo=");
    // Text parts of a system message, a tool result and (Responses) an
    // assistant's text: sent, not dropped where the format takes one string.
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        ChatMessage system("system", "");
        system.parts = {ContentPart::text_part("Be brief.")};
        r.messages.insert(r.messages.begin(), system);
        ChatMessage answer = ChatMessage::assistant("");
        answer.parts = {ContentPart::text_part("Hello.")};
        r.messages.push_back(answer);
        r.messages.push_back(ChatMessage::user("More?"));
        auto doc = body_of(r);
        REQUIRE(doc);
        const std::string body = at(*doc, "");
        CHECK(body.find("Be brief.") != std::string::npos);
        CHECK(body.find("Hello.") != std::string::npos);
        ChatRequest called = with_call(p, ToolCall{"c1", "get_time", "{}", ""});
        called.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        called.messages.back().content = "";
        called.messages.back().parts = {ContentPart::text_part("12:00")};
        auto with_result = body_of(called);
        REQUIRE(with_result);
        CHECK(at(*with_result, "").find("12:00") != std::string::npos);
    }
    // Images: in a system message only the Responses API's input items take
    // one; in an assistant's, Anthropic, Gemini and Bedrock; in a tool
    // result, none as we write it.
    struct Case {
        Provider provider;
        bool system, assistant;
    };
    for (const Case c :
         {Case{Provider::openai, false, false}, Case{Provider::openai_responses, true, false},
          Case{Provider::anthropic, false, true}, Case{Provider::gemini, false, true}}) {
        INFO(to_string(c.provider));
        auto outcome = [&](const char* role) {
            ChatRequest r = basic(c.provider);
            ChatMessage m(role, "look");
            m.parts = {image};
            r.messages.insert(r.messages.begin() + (std::string(role) == "system" ? 0 : 1), m);
            if (std::string(role) == "assistant") r.messages.push_back(ChatMessage::user("and?"));
            return build_chat_call(r);
        };
        auto system = outcome("system");
        CHECK(bool(system) == c.system);
        if (!system) {
            CHECK(system.error().code == ErrorCode::invalid_argument);
            CHECK(system.error().message ==
                  "message 0: " + std::string(to_string(c.provider)) +
                      " takes no image in a system message (refused before sending, never "
                      "dropped)");
        } else {
            CHECK(system->body.find("iVBORw0KGgo=") != std::string::npos);
        }
        auto assistant = outcome("assistant");
        CHECK(bool(assistant) == c.assistant);
        if (assistant) CHECK(assistant->body.find("iVBORw0KGgo=") != std::string::npos);
        ChatRequest called = with_call(c.provider, ToolCall{"c1", "get_time", "{}", ""});
        called.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        called.messages.back().parts = {image};
        auto tool = build_chat_call(called);
        REQUIRE_FALSE(tool);
        CHECK_THAT(tool.error().message, Catch::Contains("takes no image in a tool message"));
    }
}

TEST_CASE("a tool call in a message that is not the assistant's is refused, in every format") {
    for (Provider p : kAll) {
        INFO(to_string(p));
        ChatRequest r = basic(p);
        r.tools.push_back({"get_time", "the time", R"({"type":"object","properties":{}})"});
        r.messages.front().tool_calls = {ToolCall{"c1", "get_time", "{}", ""}};
        auto call = build_chat_call(r);
        REQUIRE_FALSE(call);
        CHECK(call.error().code == ErrorCode::invalid_argument);
        CHECK(call.error().message ==
              "message 0: a user message makes no tool calls (only an assistant's does)");
    }
}
