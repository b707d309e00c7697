// libFuzzer: the mock's reading of a chat request and the answer it makes
// (lib/mock/chat_requests.hpp, structured_replies.cpp) on any bytes: the
// first byte picks the format, the second whether the rest is the whole body
// or the JSON Schema of a structured answer (with a schema-violation or
// refusal fault now and then). Oracle: never a crash, a leak or a runaway
// allocation (run.sh caps RSS); a structured answer is JSON; every event and
// the whole body come out.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <string>

#include "chat_requests.hpp"
#include "faults.hpp"
#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace mock = nous::http::mock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const mock::Format formats[] = {mock::Format::openai, mock::Format::anthropic,
                                    mock::Format::gemini, mock::Format::responses,
                                    mock::Format::bedrock};
    const mock::Format format = formats[data[0] % 5];
    const bool whole_body = data[1] & 1;
    const mock::Fault fault = (data[1] & 6) == 2   ? mock::Fault::schema_violation
                              : (data[1] & 6) == 4 ? mock::Fault::refusal
                                                   : mock::Fault::none;
    const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);

    nous::http::MockRequest request;
    request.method = "POST";
    if (whole_body) {
        request.body = text;
    } else {
        const std::string schema = text;
        switch (format) {
            case mock::Format::openai:
                request.body = R"({"model":"m","messages":[{"role":"user","content":"x"}],)"
                               R"("response_format":{"type":"json_schema","json_schema":)"
                               R"({"name":"r","schema":)" +
                               schema + "}}}";
                break;
            case mock::Format::responses:
                request.body = R"({"model":"m","input":"x","text":{"format":{"type":"json_schema",)"
                               R"("name":"r","schema":)" +
                               schema + "}}}";
                break;
            case mock::Format::anthropic:
                request.body =
                    R"({"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}],)"
                    R"("output_config":{"format":{"type":"json_schema","schema":)" +
                    schema + "}}}";
                break;
            case mock::Format::gemini:
                request.body = R"({"contents":[{"role":"user","parts":[{"text":"x"}]}],)"
                               R"("generationConfig":{"responseMimeType":"application/json",)"
                               R"("responseJsonSchema":)" +
                               schema + "}}";
                break;
            case mock::Format::bedrock: {
                // Converse sends the schema as a string: the input, JSON-escaped.
                rapidjson::StringBuffer quoted;
                rapidjson::Writer<rapidjson::StringBuffer> w(quoted);
                w.String(schema.data(), static_cast<rapidjson::SizeType>(schema.size()));
                request.body = R"({"messages":[{"role":"user","content":[{"text":"x"}]}],)"
                               R"("outputConfig":{"textFormat":{"type":"json_schema",)"
                               R"("structure":{"jsonSchema":{"schema":)" +
                               std::string(quoted.GetString(), quoted.GetSize()) + "}}}}}";
                break;
            }
        }
    }
    mock::ChatRoute route;
    route.format = format;
    nous::http::MockServerOptions options;
    options.stream_tokens = 8;
    bool stream = false;
    mock::Reply reply;
    nous::http::MockResponse error;
    if (!mock::read_chat(route, request, options, fault, stream, reply, error)) {
        if (error.status != 400 || error.body.empty()) std::abort();
        return 0;
    }
    if (reply.pieced && fault == mock::Fault::none && !whole_body && reply.tool_name.empty()) {
        // A structured answer (when the format read the schema) is JSON.
        const std::string answer = mock::all_text(reply);
        rapidjson::Document doc;
        doc.Parse<rapidjson::kParseIterativeFlag>(answer.data(), answer.size());
        if (!answer.empty() && answer[0] == '{' && doc.HasParseError()) std::abort();
    }
    mock::EventStream events(format, reply);
    std::string event;
    std::size_t count = 0;
    while (events.next(event)) ++count;
    if (count == 0) std::abort();
    const mock::WholeBody body = mock::whole_body(format, reply);
    std::string out;
    for (std::uint64_t at = 0; at < body.size();) {
        const std::size_t got = body.read(at, 65536, out);
        if (got == 0) std::abort();
        at += got;
        out.clear();
    }
    return 0;
}
