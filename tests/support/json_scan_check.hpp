#pragma once
// The strict JSON scanner (lib/llm/json/json_scan.hpp) held to RapidJSON's reader
// as the document read runs it (iterative, in place): for any text the
// scanner accepts, the reader accepts it too and makes the same calls.
// Shared by tests/llm_test.cpp and tests/fuzz/fuzz_json_scan.cpp.

#include <rapidjson/reader.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "llm/json/json_scan.hpp"

namespace nous::test {

/// Both readers' calls, written down one per line.
struct JsonCallLog {
    std::string log;

    bool Null() { return put("null"); }
    bool Bool(bool b) { return put(b ? "true" : "false"); }
    // Every integer as one kind: the scanner reports them all as Int64.
    bool Int(int i) { return integer(i); }
    bool Uint(unsigned u) { return integer(u); }
    bool Int64(std::int64_t i) { return integer(i); }
    bool Uint64(std::uint64_t u) {
        return u <= static_cast<std::uint64_t>(INT64_MAX) ? integer(static_cast<std::int64_t>(u))
                                                          : put("uint64 " + std::to_string(u));
    }
    bool Double(double) { return put("non-integer"); }
    bool NonInteger() { return put("non-integer"); }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return put("raw"); }
    bool String(const char* s, rapidjson::SizeType n, bool) {
        return String(std::string_view(s, n));
    }
    bool String(std::string_view s) { return put("string " + hex(s)); }
    bool Key(const char* s, rapidjson::SizeType n, bool) { return Key(std::string_view(s, n)); }
    bool Key(std::string_view s) { return put("key " + hex(s)); }
    bool StartObject() { return put("{"); }
    bool EndObject(std::uint32_t n) { return put("} " + std::to_string(n)); }
    bool StartArray() { return put("["); }
    bool EndArray(std::uint32_t n) { return put("] " + std::to_string(n)); }

  private:
    bool integer(std::int64_t v) { return put("int " + std::to_string(v)); }
    bool put(const std::string& line) {
        log += line;
        log += '\n';
        return true;
    }
    // Strings written in hex: one holding a newline cannot pass for two calls.
    static std::string hex(std::string_view s) {
        static const char digits[] = "0123456789abcdef";
        std::string out;
        for (unsigned char c : s) {
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out;
    }
};

struct JsonScanVerdict {
    bool scanner_accepted = false;
    bool reader_accepted = false;
    std::string scanner_calls, reader_calls;
    /// The contract: whatever the scanner accepts, RapidJSON reads the same.
    bool agrees() const {
        return !scanner_accepted || (reader_accepted && scanner_calls == reader_calls);
    }
};

inline JsonScanVerdict compare_json_scan(std::string_view text) {
    JsonScanVerdict v;
    std::string scratch;
    JsonCallLog scanned;
    v.scanner_accepted = nous::llm::detail::scan_strict_json(text, scratch, scanned);
    v.scanner_calls = std::move(scanned.log);
    // RapidJSON's in-place read stops at a NUL: as the document read, which
    // refuses such text before parsing, only NUL-free text is compared.
    if (text.find('\0') != std::string_view::npos) return v;
    std::string copy(text);
    copy.append(16, '\0');  // its SIMD scans read whole 16-byte blocks
    JsonCallLog read;
    rapidjson::Reader reader;
    rapidjson::InsituStringStream input(copy.data());
    v.reader_accepted =
        !reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseInsituFlag>(input, read)
             .IsError();
    v.reader_calls = std::move(read.log);
    return v;
}

}  // namespace nous::test
