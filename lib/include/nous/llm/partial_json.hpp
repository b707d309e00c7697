#pragma once
// JSON read as it streams: a structured answer (or a tool call's arguments)
// arrives in deltas, and after each one the value so far is available without
// re-reading the text before it. The whole cost is O(n) in the text's length.
// And the final value checked against a JSON Schema. docs/llm.md,
// "Structured outputs".

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nous::llm {

struct JsonMember;

/// A JSON value of our own (no parser's type in the API).
struct JsonValue {
    enum class Type { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    /// A number as it was written (exact: no rounding through a double).
    std::string number;
    std::string string;
    std::vector<JsonValue> elements;  ///< Type::array
    std::vector<JsonMember> members;  ///< Type::object, in order

    /// The member named `key` (the first, if repeated), or nullptr.
    const JsonValue* member(std::string_view key) const noexcept;
    /// Compact JSON text.
    std::string to_json() const;
};

/// An object's member: its name and its value.
struct JsonMember {
    std::string first;  ///< the name
    JsonValue second;   ///< the value
};

/// An incremental JSON reader. Partial values follow these rules: members
/// and elements as far as they arrived; a string as far as it arrived, never
/// a broken escape or a split UTF-8 character; a number or literal only
/// once complete (a member whose value is an unfinished number is not there
/// yet). Each partial value extends the one before it.
class PartialJson {
  public:
    /// Maximum nesting, as for every parse of server bytes.
    static constexpr std::size_t max_depth = 256;

    PartialJson();
    ~PartialJson();
    PartialJson(PartialJson&&) noexcept;
    PartialJson& operator=(PartialJson&&) noexcept;

    /// Reads more text. False once the text is not JSON (error() says where
    /// and why); nothing more is read after that.
    bool feed(std::string_view text);
    /// The text is over: a number at the end completes. False when the text
    /// is not one whole JSON value.
    bool finish();

    /// The value so far; null before the first value starts.
    const JsonValue& value() const noexcept;
    /// Whether one whole value has been read.
    bool complete() const noexcept;
    /// Why the text is not JSON: "at byte N: ...". Empty while it may be.
    const std::string& error() const noexcept;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

/// A value that breaks a schema: where, and what was expected there.
struct SchemaViolation {
    std::string pointer;          ///< JSON pointer of the offending value ("" for the root)
    std::string expected;         ///< "type integer", "member \"name\"", "one of [...]"...
    std::string message() const;  ///< "/items/0/name: expected type string"
};

/// Checks `value` against the JSON Schema `schema` (JSON text): type,
/// properties, required, additionalProperties, items, enum, const, anyOf,
/// nesting. nullopt when valid. A schema that is not JSON is a violation at "".
std::optional<SchemaViolation> validate_against_schema(const JsonValue& value,
                                                       std::string_view schema);

}  // namespace nous::llm
