// The request builders' shared helpers (formats/request_json.hpp).

#include "formats/request_json.hpp"

#include <algorithm>

#include "formats/conversation_checks.hpp"
#include "formats/schema_dialects.hpp"
#include "json/ascii.hpp"
#include "nous/http/json.hpp"

namespace nous::llm::detail {

void string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void key_string(Writer& w, const char* key, std::string_view value) {
    w.Key(key);
    string(w, value);
}

/// Writes a parsed JSON value.
void raw_json(Writer& w, const rapidjson::Value& value) { value.Accept(w); }

/// A tool call's arguments as a JSON object (Anthropic's `input`, Gemini's
/// `args`): the text parsed, the empty object when it is empty.
void arguments_object(Writer& w, const std::string& arguments) {
    auto doc = nous::http::parse_json(arguments.empty() ? "{}" : arguments);
    if (doc && doc.value()->IsObject()) {
        raw_json(w, *doc.value());
    } else {
        w.StartObject();
        w.EndObject();
    }
}

std::optional<Error> tool_arguments_check(const ChatRequest& request, const WireFormat& format) {
    for (const ChatMessage& m : request.messages)
        for (const ToolCall& call : m.tool_calls) {
            if (call.arguments.empty()) continue;
            auto doc = nous::http::parse_json(call.arguments);
            if (doc && doc.value()->IsObject()) continue;
            return Error(nous::http::ErrorCode::invalid_argument,
                         "tool call " + quoted_if_printable(call.id, "(its id unprintable)") +
                             " (" + quoted_if_printable(call.name, "a name unprintable") +
                             "): its arguments are not a JSON object, which " +
                             std::string(format.name()) +
                             " takes as the call's input (refused before sending: never sent "
                             "altered)");
        }
    return std::nullopt;
}

std::optional<Error> model_in_path_check(const std::string& model, std::string_view format_name) {
    const bool one_segment =
        model != "." && model != ".." && std::all_of(model.begin(), model.end(), [](char c) {
            return ascii_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '@';
        });
    if (one_segment) return std::nullopt;
    return Error(nous::http::ErrorCode::invalid_argument,
                 "model " + quoted_if_printable(model, "(unprintable)") +
                     " cannot be a path segment of " + std::string(format_name) +
                     "'s URL: it takes A-Z a-z 0-9 - . _ ~ @ only");
}

/// {"name", "description"?, <schema_key>: schema}: a tool in any of the formats.
void tool_object(Writer& w, const ToolSpec& tool, const rapidjson::Value& schema,
                 const char* schema_key, const char* type, bool has_strict, bool type_said) {
    w.StartObject();
    if (type) key_string(w, "type", type);
    key_string(w, "name", tool.name);
    if (!tool.description.empty()) key_string(w, "description", tool.description);
    w.Key(schema_key);
    if (type_said)
        typed_tool_schema(w, schema);
    else
        raw_json(w, schema);
    if (has_strict) {
        w.Key("strict");
        w.Bool(tool.strict);
    }
    w.EndObject();
}

void typed_tool_schema(Writer& w, const rapidjson::Value& schema) {
    if (schema.HasMember("type")) return raw_json(w, schema);
    w.StartObject();
    key_string(w, "type", "object");
    for (const auto& member : schema.GetObject()) {
        w.Key(member.name.GetString(), member.name.GetStringLength());
        raw_json(w, member.value);
    }
    w.EndObject();
}

bool word_fits(std::string_view word, std::size_t max_size, std::string_view also) {
    const auto taken = [also](char c) {
        return ascii_alnum(c) || c == '_' || c == '-' || also.find(c) != std::string_view::npos;
    };
    return !word.empty() && word.size() <= max_size && std::all_of(word.begin(), word.end(), taken);
}

namespace {

/// A provider's rule for a tool's name: 1 to `max_size` bytes of A-Z a-z
/// 0-9 _ - and `also`.
struct ToolNameCheck {
    const char* words;  ///< the rule, in an error
    std::size_t max_size;
    std::string_view also;  ///< what the rule takes beyond A-Z a-z 0-9 _ -
    bool letter_first;      ///< the first a letter or _
    bool calls_too;         ///< the conversation's tool calls are held to it too

    bool keeps(std::string_view name) const {
        return word_fits(name, max_size, also) &&
               (!letter_first || ascii_letter(name.front()) || name.front() == '_');
    }
};

ToolNameCheck tool_name_check(ToolNameRule rule) {
    switch (rule) {
        case ToolNameRule::anthropic:
            return {"1 to 128 characters of A-Z a-z 0-9 _ -", 128, "", false, false};
        case ToolNameRule::gemini:
            return {"1 to 64 characters of A-Z a-z 0-9 _ . : -, the first a letter or _", 64,
                    ".:", true, false};
        case ToolNameRule::bedrock:
            // Converse holds the conversation's calls to it too (toolUse.name):
            // one call a model named otherwise would fail every later request.
            return {"1 to 64 characters of A-Z a-z 0-9 _ -", 64, "", false, true};
        case ToolNameRule::openai:
            break;
    }
    return {"1 to 64 characters of A-Z a-z 0-9 _ -", 64, "", false, false};
}

}  // namespace

std::optional<Error> tools_check(
    const ChatRequest& request, const RequestJson& parsed, const WireFormat& format,
    ToolNameRule names,
    std::optional<DialectBreak> (*strict_break)(const rapidjson::Value& schema)) {
    const ToolNameCheck rule = tool_name_check(names);
    const auto refused = [&](std::string what) {
        return Error(nous::http::ErrorCode::invalid_argument,
                     what + ": " + std::string(format.name()) + " takes a tool name of " +
                         rule.words + " (refused before sending)");
    };
    for (const ToolSpec& tool : request.tools)
        if (!rule.keeps(tool.name))
            return refused("tool " + quoted_if_printable(tool.name, "(its name unprintable)"));
    if (rule.calls_too)
        for (const ChatMessage& m : request.messages)
            for (const ToolCall& call : m.tool_calls)
                if (!rule.keeps(call.name))
                    return refused("tool call " +
                                   quoted_if_printable(call.id, "(its id unprintable)") + " (" +
                                   quoted_if_printable(call.name, "a name unprintable") + ")");
    for (std::size_t i = 0; i < request.tools.size(); ++i) {
        if (!request.tools[i].strict) continue;
        if (!strict_break) return unsupported("a strict tool", format);
        if (auto bad = strict_break(*parsed.tools[i]))
            return schema_refused("tool '" + request.tools[i].name + "': " + bad->message(),
                                  format);
    }
    return std::nullopt;
}

void keep_members(rapidjson::Document& body, std::initializer_list<std::string_view> keep) {
    for (auto it = body.MemberBegin(); it != body.MemberEnd();) {
        const std::string_view name(it->name.GetString(), it->name.GetStringLength());
        if (std::find(keep.begin(), keep.end(), name) == keep.end())
            it = body.EraseMember(it);
        else
            ++it;
    }
}

std::optional<std::int64_t> count_member(const rapidjson::Value& root, const char* name) {
    if (!root.IsObject()) return std::nullopt;
    auto it = root.FindMember(name);
    if (it == root.MemberEnd() || !it->value.IsInt64() || it->value.GetInt64() < 0)
        return std::nullopt;
    return it->value.GetInt64();
}

std::string wire_tool_id(std::string_view id, const ToolIdRule& rule) {
    const bool fits =
        rule.any_byte ? id.size() <= rule.max_length : word_fits(id, rule.max_length, rule.also);
    if (fits) return std::string(id);
    std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
    for (unsigned char c : id) hash = (hash ^ c) * 0x100000001b3ULL;
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "call_";
    for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(hash >> shift) & 0xf];
    return out;
}

std::string text_of(const ChatMessage& m) {
    std::string out = m.content;
    for (const ContentPart& part : m.parts)
        if (part.kind == ContentPart::Kind::text) out += part.text;
    return out;
}

/// The system prompt: the request's, then every system message's, one
/// paragraph each (for the formats with one system slot).
std::string joined_system(const ChatRequest& r) {
    std::string out = r.system;
    for (const ChatMessage& m : r.messages) {
        if (m.role != "system") continue;
        if (const std::string text = text_of(m); !text.empty())
            out += (out.empty() ? "" : "\n\n") + text;
    }
    return out;
}

/// The image as a URL: itself, or a data: URL of its bytes.
std::string image_url_of(const ContentPart& part) {
    return part.image_url.empty() ? "data:" + part.media_type + ";base64," + part.data
                                  : part.image_url;
}

/// The name of the function a tool result answers: its own, or the call's
/// with that id earlier in the conversation.
std::string tool_name_for(const ChatRequest& r, const ChatMessage& result) {
    if (!result.tool_name.empty()) return result.tool_name;
    // The latest call with that id before the result (ids may repeat across turns).
    const ChatMessage* at = &result;
    const ChatMessage* first = r.messages.data();
    for (const ChatMessage* m = at; m-- != first;)
        for (const ToolCall& call : m->tool_calls)
            if (call.id == result.tool_call_id) return call.name;
    return result.tool_call_id;
}

int thinking_budget(ReasoningEffort effort) {
    switch (effort) {
        case ReasoningEffort::low:
            return 1024;
        case ReasoningEffort::medium:
            return 4096;
        case ReasoningEffort::high:
            return 16384;
    }
    return 1024;
}

std::string_view effort_name(ReasoningEffort effort) {
    switch (effort) {
        case ReasoningEffort::low:
            return "low";
        case ReasoningEffort::medium:
            return "medium";
        case ReasoningEffort::high:
            return "high";
    }
    return "low";
}
void string_array(Writer& w, const std::vector<std::string>& items) {
    w.StartArray();
    for (const std::string& item : items) string(w, item);
    w.EndArray();
}

Error unsupported(std::string_view field, const WireFormat& format) {
    return Error(nous::http::ErrorCode::invalid_argument,
                 std::string(field) + " is not supported by " + std::string(format.name()) +
                     " (refused before sending: never dropped silently)");
}

Error schema_refused(const std::string& why, const WireFormat& format) {
    return Error(nous::http::ErrorCode::invalid_argument,
                 "response schema: " + why + " (" + std::string(format.name()) + ")");
}

std::string_view tool_choice_word(ToolChoice::Mode mode) {
    switch (mode) {
        case ToolChoice::Mode::none:
            return "none";
        case ToolChoice::Mode::required:
            return "required";
        case ToolChoice::Mode::automatic:
        case ToolChoice::Mode::named:
            break;
    }
    return "auto";
}

void write_openai_tool_choice(Writer& w, const ChatRequest& r, OpenAIShape shape) {
    if (r.tool_choice) {
        w.Key("tool_choice");
        if (r.tool_choice->mode == ToolChoice::Mode::named) {
            w.StartObject();
            key_string(w, "type", "function");
            if (shape == OpenAIShape::chat) {
                w.Key("function");
                w.StartObject();
            }
            key_string(w, "name", r.tool_choice->name);
            if (shape == OpenAIShape::chat) w.EndObject();
            w.EndObject();
        } else {
            string(w, tool_choice_word(r.tool_choice->mode));
        }
    }
    if (r.parallel_tool_calls) {
        w.Key("parallel_tool_calls");
        w.Bool(*r.parallel_tool_calls);
    }
}

void write_openai_format(Writer& w, const ResponseFormat& format, const RequestJson& parsed,
                         OpenAIShape shape) {
    w.StartObject();
    if (format.kind == ResponseFormat::Kind::json_object) {
        key_string(w, "type", "json_object");
    } else {
        key_string(w, "type", "json_schema");
        if (shape == OpenAIShape::chat) {
            w.Key("json_schema");
            w.StartObject();
        }
        key_string(w, "name", format.name);
        w.Key("schema");
        raw_json(w, *parsed.response_schema);
        w.Key("strict");
        w.Bool(format.strict);
        if (shape == OpenAIShape::chat) w.EndObject();
    }
    w.EndObject();
}

std::optional<Error> openai_request_check(const ChatRequest& request, const RequestJson& parsed,
                                          const WireFormat& format) {
    if (auto bad = tools_check(request, parsed, format, ToolNameRule::openai, openai_strict_break))
        return bad;
    if (auto bad = image_detail_check(request, format, true)) return bad;
    const bool responses = format.provider() == Provider::openai_responses ||
                           format.provider() == Provider::azure_responses;
    // Chat completions' system and assistant messages take text alone; the
    // Responses API's system items take an input_image, its assistant text none.
    if (auto bad = image_place_check(request, format, ImagePlaces{responses, false})) return bad;
    if (auto bad = tool_pairing_check(request, responses, !responses)) return bad;
    if (!request.response_format || !parsed.response_schema || !request.response_format->strict)
        return std::nullopt;
    if (auto bad = openai_strict_break(*parsed.response_schema))
        return schema_refused(bad->message(), format);
    return std::nullopt;
}

}  // namespace nous::llm::detail
