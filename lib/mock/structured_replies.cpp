// What a chat request asks of the mock's reply beyond plain text
// (structured_replies.hpp): a JSON answer generated from the request's schema
// and streamed in small deltas, the tool its tool_choice names, the text cut
// before a stop sequence; and the schema_violation and refusal faults.

#include "structured_replies.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "replies/reply_format.hpp"
#include "replies/request_fields.hpp"

namespace nous::http::mock {

namespace {

using rapidjson::Value;

/// Nesting levels of `v`, counted without recursion (a request is parsed
/// iteratively: its values may be nested far deeper than a stack allows).
std::size_t nesting(const Value& v) {
    std::size_t deepest = 0;
    std::vector<std::pair<const Value*, std::size_t>> todo{{&v, 1}};
    while (!todo.empty()) {
        const auto [value, level] = todo.back();
        todo.pop_back();
        deepest = std::max(deepest, level);
        if (value->IsArray())
            for (const Value& e : value->GetArray()) todo.emplace_back(&e, level + 1);
        else if (value->IsObject())
            for (const auto& m : value->GetObject()) todo.emplace_back(&m.value, level + 1);
    }
    return deepest;
}

/// A value valid against a schema (the keywords the providers' dialects
/// share), the same for the same schema in every run, or the reason there
/// is none within the mock's bounds: kMaxLevels levels, kMaxAnswer bytes.
/// An array holds its minItems, and one item near the root; an optional
/// property is written near the root only; a deep anyOf takes an option
/// that does not recurse. So a recursive schema (OpenAI's UI tree, whose
/// children are {"$ref":"#"}) gets a finite answer it accepts.
class Generator {
  public:
    static constexpr int kMaxLevels = 32;
    static constexpr std::size_t kMaxAnswer = 1 << 20;
    /// const and enum values are written by RapidJSON's recursive writer: at most this deep.
    static constexpr std::size_t kMaxConstNesting = 64;

    explicit Generator(const Value& root) : root_(root) {}

    /// The answer into `out`; false, with `why`, when there is none in bounds.
    bool write(const Value& schema, int depth, std::string& out, std::string& why) {
        why_.clear();
        const bool ok = value(schema, depth, out);
        why = why_;
        return ok;
    }

  private:
    static constexpr int kNearRoot = 3;  ///< levels that get optional members and an array item

    bool fail(std::string why) {
        why_ = std::move(why);
        return false;
    }
    bool room(const std::string& out) {
        return out.size() <= kMaxAnswer ||
               fail("the answer the schema asks for is over " + std::to_string(kMaxAnswer) +
                    " bytes (the mock's bound)");
    }
    bool literal(const Value& v, std::string& out) {
        if (nesting(v) > kMaxConstNesting)
            return fail("a const or enum value nested deeper than " +
                        std::to_string(kMaxConstNesting) + " levels");
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        v.Accept(w);
        out.append(buffer.GetString(), buffer.GetSize());
        return room(out);
    }

    bool value(const Value& schema, int depth, std::string& out) {
        if (depth > kMaxLevels)
            return fail("the schema asks for more than " + std::to_string(kMaxLevels) +
                        " levels (no finite answer within them)");
        if (!schema.IsObject()) {  // true, or a schema this mock does not read: any value
            out += "null";
            return true;
        }
        if (const Value* ref = find(schema, "$ref"))
            if (const Value* target = resolve(string_at(ref)))
                return value(*target, depth + 1, out);
        for (const char* list : {"anyOf", "oneOf"})
            if (const Value* options = find(schema, list);
                options && options->IsArray() && !options->Empty())
                return value(option(*options, depth), depth + 1, out);
        if (const Value* constant = find(schema, "const")) return literal(*constant, out);
        if (const Value* options = find(schema, "enum");
            options && options->IsArray() && !options->Empty())
            return literal((*options)[0], out);
        const std::string type = type_of(schema);
        if (type == "object") return object(schema, depth, out);
        if (type == "array") return array(schema, depth, out);
        if (type == "integer" || type == "number") {
            double at_least = type == "integer" ? 1 : 1.5;
            if (const Value* min = find(schema, "minimum"); min && min->IsNumber())
                at_least = std::max(at_least, min->GetDouble());
            if (type == "integer")
                out += std::to_string(static_cast<long long>(at_least));
            else
                out += at_least == 1.5 ? "1.5" : std::to_string(at_least);
            return true;
        }
        if (type == "boolean") {
            out += "true";
            return true;
        }
        if (type == "null") {
            out += "null";
            return true;
        }
        out += "\"mock\"";  // a string, or a schema that says nothing
        return true;
    }

    bool object(const Value& schema, int depth, std::string& out) {
        out += '{';
        bool first = true;
        const Value* required = find(schema, "required");
        const auto is_required = [&](std::string_view name) {
            if (!required || !required->IsArray()) return false;
            for (const Value& r : required->GetArray())
                if (r.IsString() && std::string_view(r.GetString(), r.GetStringLength()) == name)
                    return true;
            return false;
        };
        if (const Value* props = find(schema, "properties"); props && props->IsObject())
            for (const auto& m : props->GetObject()) {
                const std::string_view name(m.name.GetString(), m.name.GetStringLength());
                if (depth >= kNearRoot && !is_required(name)) continue;
                out += first ? "" : ",";
                first = false;
                out += json_string(name) + ":";
                if (!value(m.value, depth + 1, out) || !room(out)) return false;
            }
        out += '}';
        return true;
    }

    bool array(const Value& schema, int depth, std::string& out) {
        const Value* items = find(schema, "items");
        const Value* min = find(schema, "minItems");
        const Value* max = find(schema, "maxItems");
        std::uint64_t count = min && min->IsUint64() ? min->GetUint64() : 0;
        if (depth < kNearRoot) count = std::max<std::uint64_t>(count, 1);
        if (max && max->IsUint64()) count = std::min(count, max->GetUint64());
        out += '[';
        for (std::uint64_t i = 0; i < count; ++i) {
            if (i) out += ',';
            if (items) {
                if (!value(*items, depth + 1, out)) return false;
            } else {
                out += "null";
            }
            if (!room(out)) return false;
        }
        out += ']';
        return true;
    }

    /// The anyOf/oneOf option to follow: the first near the root; deeper, the
    /// first that does not refer back ($ref), so that recursion ends.
    const Value& option(const Value& options, int depth) const {
        if (depth >= kNearRoot)
            for (const Value& o : options.GetArray())
                if (!o.IsObject() || !find(o, "$ref")) return o;
        return options[0];
    }

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
    std::string why_;
};

/// The answer that breaks the schema (the schema_violation fault): a valid
/// value but for its first property, of the wrong type; or not an object.
bool violating(const Value* schema, std::string& out, std::string& why) {
    if (schema)
        if (const Value* props = find(*schema, "properties");
            props && props->IsObject() && props->MemberCount() > 0) {
            Generator generator(*schema);
            out = "{";
            bool first = true;
            for (const auto& m : props->GetObject()) {
                out += (first ? "" : ",") +
                       json_string(std::string_view(m.name.GetString(), m.name.GetStringLength())) +
                       ":";
                if (first)
                    out += string_at(find(m.value, "type")) == "string" ? "42" : "\"wrong\"";
                else if (!generator.write(m.value, 1, out, why))
                    return false;
                first = false;
            }
            out += "}";
            return true;
        }
    out = "[1,2]";
    return true;
}

/// The reply's text cut before the earliest stop sequence, if one occurs.
void cut_at_stop(const std::vector<std::string>& stops, Reply& reply) {
    if (stops.empty()) return;
    // Looked for in the first 100,000 words at most (a mock told to stream
    // millions of tokens is not searched whole).
    std::string text;
    if (reply.pieced)
        text = reply.text;
    else
        for (std::int64_t i = 0; i < reply.tokens && i < 100'000; ++i) text += word(i);
    std::size_t cut = std::string::npos;
    std::string matched;
    for (const auto& stop : stops)
        if (const auto at = text.find(stop); at < cut) {
            cut = at;
            matched = stop;
        }
    if (cut == std::string::npos) return;
    text.resize(cut);
    set_text(reply, std::move(text));
    reply.stop_sequence = matched;
}

}  // namespace

std::optional<std::string> shape_reply(Format format, const Value& doc, Fault fault, Reply& reply) {
    const ReplyFormat& replies = reply_format(format);
    const auto tool = replies.chosen_tool(doc, reply.tool_name);
    if (tool) reply.tool_name = *tool;
    const bool forced_tool = tool && !tool->empty();  // required or named: that call
    bool object_mode = false;
    const Value* schema = replies.requested_schema(doc, object_mode);
    if (fault == Fault::refusal) {
        reply.tool_name.clear();
        if (!replies.has_refusal()) {
            set_text(reply, kRefusal);  // no refusal field (Gemini): the model's words are the text
        } else {
            reply.refusal = true;
            set_text(reply, "");
        }
        return std::nullopt;
    }
    if ((schema || object_mode) && !forced_tool) {
        std::string answer, why;
        const bool made = fault == Fault::schema_violation ? violating(schema, answer, why)
                          : schema ? Generator(*schema).write(*schema, 0, answer, why)
                                   : (answer = R"({"answer":"mock"})", true);
        if (!made) return "the mock cannot answer this schema: " + why;
        set_text(reply, std::move(answer));  // moved, never copied: held once
        reply.tool_name.clear();             // the answer is the structured value
        return std::nullopt;
    }
    cut_at_stop(replies.stop_sequences(doc), reply);
    return std::nullopt;
}

}  // namespace nous::http::mock
