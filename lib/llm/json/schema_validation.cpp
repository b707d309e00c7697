// A structured answer against its JSON Schema (nous/llm/partial_json.hpp):
// the keywords the providers' structured-output dialects share (type,
// properties, required, additionalProperties, items, enum, const, anyOf,
// $ref into $defs / definitions). Keywords outside them are not checked.

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

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

/// A JSON number by its mathematical value: sign, significant digits (no
/// leading or trailing zeros), and the power of ten of the last one. Two
/// numbers are equal when these are (1, 1.0 and 10e-1 alike; 2^53 and
/// 2^53 + 1 apart, as a double could not tell them).
struct DecimalValue {
    bool negative = false;
    std::string digits;  ///< "" for zero
    long long exponent = 0;
    bool operator==(const DecimalValue&) const = default;
};

DecimalValue decimal_of(std::string_view text) {
    DecimalValue out;
    std::size_t i = 0;
    if (i < text.size() && text[i] == '-') {
        out.negative = true;
        ++i;
    }
    long long fraction_digits = 0;
    bool in_fraction = false;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') {
            in_fraction = true;
            continue;
        }
        out.digits += text[i];
        fraction_digits += in_fraction;
    }
    long long exponent = 0;
    if (i < text.size()) {
        std::string_view e = text.substr(i + 1);
        if (!e.empty() && e[0] == '+') e.remove_prefix(1);
        const auto [end, ec] = std::from_chars(e.data(), e.data() + e.size(), exponent);
        // Past a long long: beyond any double, equal only to itself.
        if (ec == std::errc::result_out_of_range)
            exponent = e[0] == '-' ? LLONG_MIN / 2 : LLONG_MAX / 2;
    }
    const std::size_t first = out.digits.find_first_not_of('0');
    if (first == std::string::npos) return DecimalValue{};  // zero, -0 included
    out.digits.erase(0, first);
    const std::size_t last = out.digits.find_last_not_of('0');
    const long long trailing = static_cast<long long>(out.digits.size() - 1 - last);
    out.digits.resize(last + 1);
    out.exponent = exponent - fraction_digits + trailing;
    return out;
}

/// A schema's number as text: exact for an integer RapidJSON holds whole,
/// else the shortest text that reads back as its double.
std::string number_text(const Value& b) {
    if (b.IsInt64()) return std::to_string(b.GetInt64());
    if (b.IsUint64()) return std::to_string(b.GetUint64());
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, b.GetDouble());
    return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

/// JSON equality of our value and a schema's (numbers by mathematical value).
bool equal(const JsonValue& a, const Value& b) {
    switch (a.type) {
        case JsonValue::Type::null:
            return b.IsNull();
        case JsonValue::Type::boolean:
            return b.IsBool() && b.GetBool() == a.boolean;
        case JsonValue::Type::number:
            return b.IsNumber() && decimal_of(a.number) == decimal_of(number_text(b));
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

/// Checks a value against a schema. The bounds are the value's, not the
/// schema's: a recursive schema may check a value as deep as PartialJson
/// reads (its max_depth), each level through at most kMaxHops $ref and anyOf
/// steps; each (value, schema) pair is checked once (an anyOf over shared
/// $refs would otherwise cost 2^n), and a check stops after kMaxSteps.
/// (Once per value: a definition's result is kept for the value it checked.)
class Validator {
  public:
    static constexpr int kMaxValueDepth = static_cast<int>(PartialJson::max_depth);
    static constexpr int kMaxHops = 64;
    static constexpr std::size_t kMaxSteps = 1'000'000;

    explicit Validator(const Value& root) : root_(root) {}

    std::optional<SchemaViolation> check(const JsonValue& v, const Value& schema,
                                         const std::string& at, int depth, int hops = 0) {
        if (depth > kMaxValueDepth)
            return SchemaViolation{
                at, "a value nested at most " + std::to_string(kMaxValueDepth) + " levels deep"};
        if (hops > kMaxHops)
            return SchemaViolation{at, "a schema that reaches a type within " +
                                           std::to_string(kMaxHops) + " $ref and anyOf steps"};
        if (++steps_ > kMaxSteps)
            return SchemaViolation{at, "a schema checked within " + std::to_string(kMaxSteps) +
                                           " steps (this one is too costly to check)"};
        if (schema.IsObject())
            if (const Value* ref = member(schema, "$ref"); ref && ref->IsString()) {
                const Value* target =
                    resolve(std::string_view(ref->GetString(), ref->GetStringLength()));
                if (!target) return SchemaViolation{at, "a $ref the schema defines"};
                // A definition is checked once per value, however many
                // anyOf options lead to it.
                const std::pair<const JsonValue*, const Value*> key{&v, target};
                if (auto known = memo_.find(key); known != memo_.end()) return known->second;
                auto result = check(v, *target, at, depth, hops + 1);
                memo_.emplace(key, result);
                return result;
            }
        return check_once(v, schema, at, depth, hops);
    }

  private:
    struct PairHash {
        std::size_t operator()(const std::pair<const JsonValue*, const Value*>& p) const noexcept {
            return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
        }
    };

    std::optional<SchemaViolation> check_once(const JsonValue& v, const Value& schema,
                                              const std::string& at, int depth, int hops) {
        if (schema.IsBool()) {
            if (schema.GetBool()) return std::nullopt;
            return SchemaViolation{at, "nothing (the schema is false)"};
        }
        if (!schema.IsObject()) return std::nullopt;
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
                if (!check(v, option, at, depth, hops + 1)) {
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
    std::unordered_map<std::pair<const JsonValue*, const Value*>, std::optional<SchemaViolation>,
                       PairHash>
        memo_;
    std::size_t steps_ = 0;
};

}  // namespace

std::string SchemaViolation::message() const {
    return (pointer.empty() ? std::string("(root)") : pointer) + ": expected " + expected;
}

std::optional<SchemaViolation> validate_against_schema(const JsonValue& value,
                                                       std::string_view schema) {
    auto doc = nous::http::parse_json(schema);
    if (!doc) return SchemaViolation{"", "a schema that is JSON (" + doc.error().message + ")"};
    Validator validator(*doc.value());
    return validator.check(value, *doc.value(), "", 0);
}

}  // namespace nous::llm
