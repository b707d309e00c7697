// The request bodies the mock received, one file each (request_recorder.hpp).

#include "request_recorder.hpp"

#include <cstdio>
#include <fstream>

namespace nous::http::mock {

namespace {

/// An Anthropic body's kind names the anthropic-version it was sent with:
/// the version decides which request type the body is held to.
std::string with_version(const char* kind, const MockRequest& request) {
    return std::string(kind) + "@" + request.header("anthropic-version").value_or("none");
}

}  // namespace

void RequestRecorder::chat(Format format, const MockRequest& request) {
    switch (format) {
        case Format::openai:
            return write("openai-chat", request.body);
        case Format::responses:
            return write("openai-responses", request.body);
        case Format::gemini:
            return write("gemini", request.body);
        case Format::anthropic:
            return write(with_version("anthropic", request), request.body);
        case Format::bedrock:
            return write("bedrock-converse", request.body);
    }
}

void RequestRecorder::embeddings(Format format, const MockRequest& request) {
    write(format == Format::gemini ? "gemini-embeddings" : "openai-embeddings", request.body);
}

void RequestRecorder::count(Format format, const MockRequest& request) {
    if (format == Format::anthropic)
        write(with_version("anthropic-count", request), request.body);
    else if (format == Format::bedrock)
        write("bedrock-count", request.body);
    else
        write(format == Format::gemini ? "gemini-count" : "openai-responses-count", request.body);
}

void RequestRecorder::write(std::string_view kind, const std::string& body) {
    char number[16];
    std::snprintf(number, sizeof number, "%06llu",
                  static_cast<unsigned long long>(count_.fetch_add(1) + 1));
    std::ofstream(dir_ + "/" + number + "." + std::string(kind) + ".json", std::ios::binary)
        << body;
}

}  // namespace nous::http::mock
