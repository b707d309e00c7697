// What a chat request asks of the mock's reply beyond plain text
// (structured_replies.hpp): a JSON answer generated from the request's schema
// and streamed in small deltas, the tool its tool_choice names, the text cut
// before a stop sequence; and the schema_violation and refusal faults.

#include "structured_replies.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <string_view>

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

using rapidjson::Value;

std::string compact(const Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v.Accept(w);
    return std::string(buffer.GetString(), buffer.GetSize());
}

/// A value valid against `schema` (the keywords the providers' dialects
/// share), the same for the same schema in every run.
class Generator {
  public:
    explicit Generator(const Value& root) : root_(root) {}

    std::string value(const Value& schema, int depth) const {
        if (depth > 32 || !schema.IsObject()) return "null";
        if (const Value* ref = find(schema, "$ref"))
            if (const Value* target = resolve(string_at(ref))) return value(*target, depth + 1);
        for (const char* list : {"anyOf", "oneOf"})
            if (const Value* options = find(schema, list);
                options && options->IsArray() && !options->Empty())
                return value((*options)[0], depth + 1);
        if (const Value* constant = find(schema, "const")) return compact(*constant);
        if (const Value* options = find(schema, "enum");
            options && options->IsArray() && !options->Empty())
            return compact((*options)[0]);
        const std::string type = type_of(schema);
        if (type == "object") {
            std::string out = "{";
            if (const Value* props = find(schema, "properties"); props && props->IsObject())
                for (const auto& m : props->GetObject()) {
                    if (out.size() > 1) out += ",";
                    out += json_string(
                               std::string_view(m.name.GetString(), m.name.GetStringLength())) +
                           ":" + value(m.value, depth + 1);
                }
            return out + "}";
        }
        if (type == "array") {
            const Value* items = find(schema, "items");
            const Value* min = find(schema, "minItems");
            const unsigned count = std::max(1u, min && min->IsUint() ? min->GetUint() : 1u);
            std::string out = "[";
            for (unsigned i = 0; i < std::min(count, 8u); ++i)
                out += (i ? "," : "") + (items ? value(*items, depth + 1) : std::string("null"));
            return out + "]";
        }
        if (type == "integer" || type == "number") {
            double at_least = type == "integer" ? 1 : 1.5;
            if (const Value* min = find(schema, "minimum"); min && min->IsNumber())
                at_least = std::max(at_least, min->GetDouble());
            if (type == "integer") return std::to_string(static_cast<long long>(at_least));
            return at_least == 1.5 ? "1.5" : std::to_string(at_least);
        }
        if (type == "boolean") return "true";
        if (type == "null") return "null";
        return "\"mock\"";  // a string, or a schema that says nothing
    }

  private:
    static std::string type_of(const Value& schema) {
        const Value* type = find(schema, "type");
        if (type && type->IsString()) return type->GetString();
        if (type && type->IsArray())
            for (const Value& t : type->GetArray())
                if (t.IsString() && std::string_view(t.GetString()) != "null") return t.GetString();
        if (find(schema, "properties")) return "object";
        if (find(schema, "items")) return "array";
        return "string";
    }

    const Value* resolve(const std::string& ref) const {
        for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
            const std::string p = prefix;
            if (ref.rfind(p, 0) != 0) continue;
            const Value* defs = find(root_, p == "#/$defs/" ? "$defs" : "definitions");
            return defs ? find(*defs, ref.substr(p.size()).c_str()) : nullptr;
        }
        return ref == "#" ? &root_ : nullptr;
    }

    const Value& root_;
};

/// The answer that breaks the schema (the schema_violation fault): a valid
/// value but for its first property, of the wrong type; or not an object.
std::string violating(const Value* schema) {
    if (schema)
        if (const Value* props = find(*schema, "properties");
            props && props->IsObject() && props->MemberCount() > 0) {
            const Generator generator(*schema);
            std::string out = "{";
            bool first = true;
            for (const auto& m : props->GetObject()) {
                const std::string name =
                    json_string(std::string_view(m.name.GetString(), m.name.GetStringLength()));
                const bool is_string = string_at(find(m.value, "type")) == "string";
                out += (first ? "" : ",") + name + ":" +
                       (first ? (is_string ? "42" : "\"wrong\"") : generator.value(m.value, 1));
                first = false;
            }
            return out + "}";
        }
    return "[1,2]";
}

/// The JSON text in pieces of a few bytes each, as a model streams it.
std::vector<std::string> in_pieces(const std::string& text) {
    std::vector<std::string> pieces;
    for (std::size_t at = 0; at < text.size(); at += 4) pieces.push_back(text.substr(at, 4));
    return pieces;
}

/// The reply's text cut before the earliest stop sequence, if one occurs.
void cut_at_stop(const std::vector<std::string>& stops, Reply& reply) {
    if (stops.empty()) return;
    std::vector<std::string> pieces = reply.pieces;
    if (pieces.empty())
        for (std::int64_t i = 0; i < reply.tokens && i < 100000; ++i) pieces.emplace_back(word(i));
    std::string text;
    for (const auto& p : pieces) text += p;
    std::size_t cut = std::string::npos;
    std::string matched;
    for (const auto& stop : stops)
        if (const auto at = text.find(stop); at < cut) {
            cut = at;
            matched = stop;
        }
    if (cut == std::string::npos) return;
    std::vector<std::string> kept;
    std::size_t used = 0;
    for (const auto& p : pieces) {
        if (used >= cut) break;
        kept.push_back(p.substr(0, cut - used));
        used += p.size();
    }
    reply.pieces = std::move(kept);
    reply.tokens = static_cast<std::int64_t>(reply.pieces.size());
    reply.stop_sequence = matched;
}

}  // namespace

void shape_reply(Format format, const Value& doc, Fault fault, Reply& reply) {
    const ReplyFormat& replies = reply_format(format);
    const auto tool = replies.chosen_tool(doc, reply.tool_name);
    if (tool) reply.tool_name = *tool;
    const bool forced_tool = tool && !tool->empty();  // required or named: that call
    bool object_mode = false;
    const Value* schema = replies.requested_schema(doc, object_mode);
    if (fault == Fault::refusal) {
        reply.tool_name.clear();
        if (!replies.has_refusal()) {
            // No refusal field (Gemini): the model's words are the text.
            reply.pieces = in_pieces("I can't help with that.");
        } else {
            reply.refusal = true;
            reply.pieces.clear();
        }
        reply.tokens = static_cast<std::int64_t>(reply.pieces.size());
        return;
    }
    if ((schema || object_mode) && !forced_tool) {
        std::string answer;
        if (fault == Fault::schema_violation)
            answer = violating(schema);
        else if (schema)
            answer = Generator(*schema).value(*schema, 0);
        else
            answer = R"({"answer":"mock"})";
        reply.pieces = in_pieces(answer);
        reply.tokens = static_cast<std::int64_t>(reply.pieces.size());
        reply.tool_name.clear();  // the answer is the structured value
        return;
    }
    cut_at_stop(replies.stop_sequences(doc), reply);
}

}  // namespace nous::http::mock
