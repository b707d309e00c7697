// JsonValue (nous/llm/partial_json.hpp): a member by name, and the value as
// compact JSON.

#include <string>

#include "json/json_string.hpp"
#include "nous/llm/partial_json.hpp"

namespace nous::llm {

namespace {

void write_value(std::string& out, const JsonValue& v) {
    switch (v.type) {
        case JsonValue::Type::null:
            out += "null";
            return;
        case JsonValue::Type::boolean:
            out += v.boolean ? "true" : "false";
            return;
        case JsonValue::Type::number:
            out += v.number;
            return;
        case JsonValue::Type::string:
            detail::append_json_string(out, v.string);
            return;
        case JsonValue::Type::array:
            out += '[';
            for (std::size_t i = 0; i < v.elements.size(); ++i) {
                if (i) out += ',';
                write_value(out, v.elements[i]);
            }
            out += ']';
            return;
        case JsonValue::Type::object:
            out += '{';
            for (std::size_t i = 0; i < v.members.size(); ++i) {
                if (i) out += ',';
                detail::append_json_string(out, v.members[i].first);
                out += ':';
                write_value(out, v.members[i].second);
            }
            out += '}';
            return;
    }
}

}  // namespace

const JsonValue* JsonValue::member(std::string_view key) const noexcept {
    for (const auto& m : members)
        if (m.first == key) return &m.second;
    return nullptr;
}

std::string JsonValue::to_json() const {
    std::string out;
    write_value(out, *this);
    return out;
}

}  // namespace nous::llm
