#pragma once
// A string as JSON text (nous_llm internal): quoted, with quotes,
// backslashes and control bytes escaped (\n, \r, \t short, the others
// \u00XX), every other byte as it is. JsonValue::to_json and the OTLP span
// writer both write strings through it.

#include <string>
#include <string_view>

namespace nous::llm::detail {

void append_json_string(std::string& out, std::string_view text);

}  // namespace nous::llm::detail
