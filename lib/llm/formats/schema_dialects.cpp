// The providers' structured-output schema dialects (formats/schema_dialects.hpp).
// One walk over the schema's subschemas (properties, items, anyOf, $defs...)
// with each provider's rules; the rules and their sources are in docs/llm.md.

#include "formats/schema_dialects.hpp"

#include <array>
#include <functional>
#include <string_view>

#include "json/provider_json.hpp"

namespace nous::llm::detail {

namespace {

using rapidjson::Value;

bool is_object_schema(const Value& s) {
    if (!s.IsObject()) return false;
    auto type = s.FindMember("type");
    if (type != s.MemberEnd() && type->value.IsString())
        return std::string_view(type->value.GetString()) == "object";
    return s.HasMember("properties");
}

using Rule = std::function<std::optional<std::string>(const Value& node, int depth)>;

/// Every subschema of `node` with its pointer, depth counting object nesting.
std::optional<DialectBreak> walk(const Value& node, const std::string& at, int depth,
                                 const Rule& rule) {
    if (!node.IsObject()) return std::nullopt;
    if (auto bad = rule(node, depth)) return DialectBreak{at, *bad};
    const int inner = depth + (is_object_schema(node) ? 1 : 0);
    for (const char* map : {"properties", "$defs", "definitions"}) {
        auto it = node.FindMember(map);
        if (it == node.MemberEnd() || !it->value.IsObject()) continue;
        for (const auto& m : it->value.GetObject()) {
            const std::string here =
                at + "/" + map + "/" +
                pointer_token(std::string_view(m.name.GetString(), m.name.GetStringLength()));
            if (auto bad = walk(m.value, here,
                                std::string_view(map) == "properties" ? inner : depth, rule))
                return bad;
        }
    }
    for (const char* one : {"items", "additionalProperties", "not"}) {
        auto it = node.FindMember(one);
        if (it != node.MemberEnd())
            if (auto bad = walk(it->value, at + "/" + one, inner, rule)) return bad;
    }
    for (const char* list : {"anyOf", "oneOf", "allOf", "prefixItems"}) {
        auto it = node.FindMember(list);
        if (it == node.MemberEnd() || !it->value.IsArray()) continue;
        for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i)
            if (auto bad =
                    walk(it->value[i], at + "/" + list + "/" + std::to_string(i), inner, rule))
                return bad;
    }
    return std::nullopt;
}

/// The first of `keywords` that `node` has, else nullptr.
template <std::size_t N>
const char* first_of(const Value& node, const std::array<const char*, N>& keywords) {
    for (const char* k : keywords)
        if (node.HasMember(k)) return k;
    return nullptr;
}

std::optional<std::string> not_false_additional(const Value& node, const char* mode) {
    if (!is_object_schema(node)) return std::nullopt;
    auto it = node.FindMember("additionalProperties");
    if (it == node.MemberEnd() || !it->value.IsBool() || it->value.GetBool())
        return std::string("additionalProperties must be false") + mode;
    return std::nullopt;
}

}  // namespace

std::optional<DialectBreak> openai_strict_break(const Value& schema) {
    // The root: an object, not an anyOf.
    if (!is_object_schema(schema))
        return DialectBreak{"", "the root must be an object schema in strict mode"};
    static constexpr std::array<const char*, 16> refused = {"allOf",
                                                            "not",
                                                            "if",
                                                            "then",
                                                            "else",
                                                            "dependentRequired",
                                                            "dependentSchemas",
                                                            "patternProperties",
                                                            "unevaluatedProperties",
                                                            "propertyNames",
                                                            "minProperties",
                                                            "maxProperties",
                                                            "unevaluatedItems",
                                                            "contains",
                                                            "uniqueItems",
                                                            "minLength"};
    return walk(schema, "", 0, [](const Value& node, int depth) -> std::optional<std::string> {
        if (const char* k = first_of(node, refused))
            return std::string(k) + " is not supported in strict mode";
        if (node.HasMember("maxLength"))
            return std::string("maxLength is not supported in strict mode");
        if (depth > 10) return std::string("objects nest at most 10 levels in strict mode");
        if (auto bad = not_false_additional(node, " in strict mode")) return bad;
        if (is_object_schema(node)) {
            auto props = node.FindMember("properties");
            auto required = node.FindMember("required");
            if (props != node.MemberEnd() && props->value.IsObject())
                for (const auto& m : props->value.GetObject()) {
                    bool listed = false;
                    if (required != node.MemberEnd() && required->value.IsArray())
                        for (const Value& r : required->value.GetArray())
                            listed = listed || (r.IsString() && r == m.name);
                    if (!listed)
                        return "property \"" + std::string(m.name.GetString()) +
                               "\" must be listed in required in strict mode";
                }
        }
        return std::nullopt;
    });
}

std::optional<DialectBreak> anthropic_break(const Value& schema) {
    if (!is_object_schema(schema)) return DialectBreak{"", "the root must be an object schema"};
    static constexpr std::array<const char*, 12> refused = {
        "minimum",   "maximum",  "exclusiveMinimum", "exclusiveMaximum",  "multipleOf", "minLength",
        "maxLength", "maxItems", "uniqueItems",      "patternProperties", "not",        "if"};
    return walk(schema, "", 0, [](const Value& node, int) -> std::optional<std::string> {
        if (const char* k = first_of(node, refused))
            return std::string(k) + " is not supported by Anthropic structured outputs";
        if (auto min = node.FindMember("minItems");
            min != node.MemberEnd() && (!min->value.IsUint() || min->value.GetUint() > 1))
            return std::string("minItems must be 0 or 1 for Anthropic structured outputs");
        return not_false_additional(node, " for Anthropic structured outputs");
    });
}

std::optional<DialectBreak> gemini_break(const Value& schema) {
    if (!schema.IsObject()) return DialectBreak{"", "the schema must be a JSON object"};
    static constexpr std::array<const char*, 7> refused = {
        "allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas"};
    return walk(schema, "", 0, [](const Value& node, int) -> std::optional<std::string> {
        if (const char* k = first_of(node, refused))
            return std::string(k) + " is not supported by Gemini's responseJsonSchema";
        return std::nullopt;
    });
}

}  // namespace nous::llm::detail
