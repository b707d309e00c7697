#pragma once
// What a chat request asks of the mock's reply beyond plain text (nous_mock
// internal): a structured answer generated from its schema, valid against it
// and streamed in small deltas; the tool its tool_choice names (or none);
// the text cut before a stop sequence; the schema_violation and refusal
// faults.

#include <rapidjson/document.h>

#include <optional>
#include <string>

#include "faults.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

/// Adjusts `reply` to what the request `doc` (its provider's JSON) asks;
/// the reason when the mock cannot (a schema whose answer is past its
/// bounds), for a 400.
std::optional<std::string> shape_reply(Format format, const rapidjson::Value& doc, Fault fault,
                                       Reply& reply);

}  // namespace nous::http::mock
