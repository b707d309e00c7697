// A structured answer against its JSON Schema (nous/llm/partial_json.hpp):
// the keywords the providers' structured-output dialects share (type,
// properties, required, additionalProperties, items, enum, const, anyOf,
// $ref into $defs / definitions). Keywords outside them are not checked.

#include <cmath>
#include <cstdlib>
#include <string>

#include "json/provider_json.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/partial_json.hpp"

namespace nous::llm {

namespace {

using detail::compact;
using detail::member;
using detail::pointer_token;
using rapidjson::Value;

bool is_integer(const JsonValue& v) {
    if (v.type != JsonValue::Type::number) return false;
    if (v.number.find_first_of(".eE") == std::string::npos) return true;
    const double d = std::strtod(v.number.c_str(), nullptr);
    return std::isfinite(d) && d == std::floor(d);
}

bool has_type(const JsonValue& v, std::string_view type) {
    switch (v.type) {
        case JsonValue::Type::null:
            return type == "null";
        case JsonValue::Type::boolean:
            return type == "boolean";
        case JsonValue::Type::number:
            return type == "number" || (type == "integer" && is_integer(v));
        case JsonValue::Type::string:
            return type == "string";
        case JsonValue::Type::array:
            return type == "array";
        case JsonValue::Type::object:
            return type == "object";
    }
    return false;
}

/// JSON equality of our value and a schema's (numbers by value).
bool equal(const JsonValue& a, const Value& b) {
    switch (a.type) {
        case JsonValue::Type::null:
            return b.IsNull();
        case JsonValue::Type::boolean:
            return b.IsBool() && b.GetBool() == a.boolean;
        case JsonValue::Type::number:
            return b.IsNumber() && std::strtod(a.number.c_str(), nullptr) == b.GetDouble();
        case JsonValue::Type::string:
            return b.IsString() && a.string == std::string_view(b.GetString(), b.GetStringLength());
        case JsonValue::Type::array:
            if (!b.IsArray() || b.Size() != a.elements.size()) return false;
            for (rapidjson::SizeType i = 0; i < b.Size(); ++i)
                if (!equal(a.elements[i], b[i])) return false;
            return true;
        case JsonValue::Type::object: {
            if (!b.IsObject() || b.MemberCount() != a.members.size()) return false;
            for (const auto& [key, value] : a.members) {
                auto it = b.FindMember(rapidjson::StringRef(key.data(), key.size()));
                if (it == b.MemberEnd() || !equal(value, it->value)) return false;
            }
            return true;
        }
    }
    return false;
}

class Validator {
  public:
    explicit Validator(const Value& root) : root_(root) {}

    std::optional<SchemaViolation> check(const JsonValue& v, const Value& schema,
                                         const std::string& at, int depth) const {
        if (depth > 256) return SchemaViolation{at, "a schema nested less deep"};
        if (schema.IsBool()) {
            if (schema.GetBool()) return std::nullopt;
            return SchemaViolation{at, "nothing (the schema is false)"};
        }
        if (!schema.IsObject()) return std::nullopt;
        if (const Value* ref = member(schema, "$ref"); ref && ref->IsString()) {
            const Value* target =
                resolve(std::string_view(ref->GetString(), ref->GetStringLength()));
            if (!target) return SchemaViolation{at, "a $ref the schema defines"};
            return check(v, *target, at, depth + 1);
        }
        if (const Value* type = member(schema, "type")) {
            bool ok = false;
            std::string names;
            if (type->IsString()) {
                ok = has_type(v, type->GetString());
                names = type->GetString();
            } else if (type->IsArray()) {
                for (const Value& t : type->GetArray()) {
                    if (!t.IsString()) continue;
                    ok = ok || has_type(v, t.GetString());
                    names += (names.empty() ? "" : " or ") + std::string(t.GetString());
                }
            } else {
                ok = true;
            }
            if (!ok) return SchemaViolation{at, "type " + names};
        }
        if (const Value* constant = member(schema, "const"); constant && !equal(v, *constant))
            return SchemaViolation{at, "the constant " + compact(*constant)};
        if (const Value* options = member(schema, "enum"); options && options->IsArray()) {
            bool found = false;
            for (const Value& option : options->GetArray()) found = found || equal(v, option);
            if (!found) return SchemaViolation{at, "one of " + compact(*options)};
        }
        if (const Value* any = member(schema, "anyOf"); any && any->IsArray()) {
            bool matched = false;
            for (const Value& option : any->GetArray())
                if (!check(v, option, at, depth + 1)) {
                    matched = true;
                    break;
                }
            if (!matched) return SchemaViolation{at, "a value matching one of anyOf"};
        }
        if (v.type == JsonValue::Type::object) {
            const Value* properties = member(schema, "properties");
            if (const Value* required = member(schema, "required"); required && required->IsArray())
                for (const Value& name : required->GetArray())
                    if (name.IsString() && !v.member(name.GetString()))
                        return SchemaViolation{
                            at, "member \"" + std::string(name.GetString()) + "\" (required)"};
            const Value* additional = member(schema, "additionalProperties");
            for (const auto& [key, value] : v.members) {
                const std::string here = at + "/" + pointer_token(key);
                const Value* property = nullptr;
                if (properties && properties->IsObject()) {
                    auto it = properties->FindMember(rapidjson::StringRef(key.data(), key.size()));
                    if (it != properties->MemberEnd()) property = &it->value;
                }
                if (property) {
                    if (auto bad = check(value, *property, here, depth + 1)) return bad;
                } else if (additional) {
                    if (additional->IsBool() && !additional->GetBool())
                        return SchemaViolation{
                            here, "no member \"" + key + "\" (additionalProperties is false)"};
                    if (auto bad = check(value, *additional, here, depth + 1)) return bad;
                }
            }
        }
        if (v.type == JsonValue::Type::array) {
            if (const Value* items = member(schema, "items");
                items && (items->IsObject() || items->IsBool()))
                for (std::size_t i = 0; i < v.elements.size(); ++i)
                    if (auto bad =
                            check(v.elements[i], *items, at + "/" + std::to_string(i), depth + 1))
                        return bad;
        }
        return std::nullopt;
    }

  private:
    /// "#", "#/$defs/Name", "#/definitions/Name" (pointer tokens unescaped).
    const Value* resolve(std::string_view ref) const {
        if (ref.empty() || ref[0] != '#') return nullptr;
        ref.remove_prefix(1);
        const Value* at = &root_;
        while (!ref.empty()) {
            if (ref[0] != '/') return nullptr;
            ref.remove_prefix(1);
            const std::size_t slash = ref.find('/');
            std::string token(ref.substr(0, slash));
            ref = slash == std::string_view::npos ? std::string_view() : ref.substr(slash);
            std::string name;
            for (std::size_t i = 0; i < token.size(); ++i) {
                if (token[i] == '~' && i + 1 < token.size()) {
                    name += token[i + 1] == '1' ? '/' : '~';
                    ++i;
                } else {
                    name += token[i];
                }
            }
            if (!at->IsObject()) return nullptr;
            auto it = at->FindMember(rapidjson::StringRef(name.data(), name.size()));
            if (it == at->MemberEnd()) return nullptr;
            at = &it->value;
        }
        return at;
    }

    const Value& root_;
};

}  // namespace

std::string SchemaViolation::message() const {
    return (pointer.empty() ? std::string("(root)") : pointer) + ": expected " + expected;
}

std::optional<SchemaViolation> validate_against_schema(const JsonValue& value,
                                                       std::string_view schema) {
    auto doc = nous::http::parse_json(schema);
    if (!doc) return SchemaViolation{"", "a schema that is JSON (" + doc.error().message + ")"};
    return Validator(*doc.value()).check(value, *doc.value(), "", 0);
}

}  // namespace nous::llm
