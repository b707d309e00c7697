#pragma once
// Bedrock Converse, the format (nous_llm internal): the pieces the bedrock
// platform (platforms/bedrock.cpp) puts behind its WireFormat. The format
// knows the body and the answers; the platform, the URL and the signature.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/wire_format.hpp"

namespace nous::llm::detail {

/// A field Converse does not take, an image it cannot take, a schema outside its dialect.
std::optional<Error> converse_check(const ChatRequest& request, const RequestJson& parsed,
                                    const WireFormat& format);
/// The ConverseRequest body (no modelId: it is in the URL).
void converse_write_body(Writer& w, const ChatRequest& request, const RequestJson& parsed);
/// The reader of converse-stream's events (the AWS event stream's, by event type).
std::unique_ptr<EventReader> converse_event_reader();
/// Prompt caching as cachePoint blocks (prompt_cache.cpp).
std::optional<Error> write_converse_cache(rapidjson::Document& body, const ChatRequest& request,
                                          const WireFormat& format);
/// The CountTokens body: {"input":{"converse":{messages, system, toolConfig}}} of the call's body.
void converse_count_body(rapidjson::Document& body);
/// A ConverseResponse into deltas.
std::optional<Error> converse_read_whole(const rapidjson::Value& root, std::vector<Delta>& deltas);
/// The words of an error body: its `message` (or `Message`).
std::string converse_error_message(const rapidjson::Value& root);

}  // namespace nous::llm::detail
