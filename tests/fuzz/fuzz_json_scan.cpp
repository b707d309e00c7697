// libFuzzer: the strict JSON scanner under the OpenAI chunk reader. Any
// bytes: never a crash, never a read outside the text, and whatever it
// accepts RapidJSON's reader (the document read's) accepts with the same
// calls (tests/support/json_scan_check.hpp). A NUL in the text: the scanner
// must refuse it (the document read does).

#include "fuzz_support.hpp"
#include "json_scan_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy: AddressSanitizer sees any read past the end.
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto verdict = nous::test::compare_json_scan(text);
    if (text.find('\0') != std::string::npos) {
        nous::fuzz::require(!verdict.scanner_accepted);
    } else {
        nous::fuzz::require(verdict.agrees());
    }
    return 0;
}
