// What we send a provider is JSON, which is UTF-8: the check that finds the
// first byte that is not (RFC 3629's table, with the ASCII fast path's
// offsets), and the chat and embeddings requests it refuses before a byte.

#include "json/utf8_check.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "nous/llm/chat.hpp"
#include "nous/llm/embed.hpp"

using nous::llm::detail::first_invalid_utf8;

TEST_CASE("utf8 check: well-formed text of every length passes") {
    for (const std::string& text :
         {std::string(), std::string("plain ascii"), std::string("caf\xc3\xa9"),
          std::string("\xe2\x82\xac euro"), std::string("\xf0\x9f\x98\x80 emoji"),
          std::string("\xed\x9f\xbf"),         // U+D7FF, just below the surrogates
          std::string("\xee\x80\x80"),         // U+E000, just above them
          std::string("\xf4\x8f\xbf\xbf"),     // U+10FFFF, the last code point
          std::string("\xc2\x80\xdf\xbf"),     // U+0080 and U+07FF
          std::string("\xe0\xa0\x80"),         // U+0800, the smallest three-byte form
          std::string("\xf0\x90\x80\x80")}) {  // U+10000, the smallest four-byte form
        INFO(text);
        CHECK_FALSE(first_invalid_utf8(text));
    }
}

TEST_CASE("utf8 check: the offset of the first byte that begins no character") {
    struct Case {
        std::string text;
        std::size_t at;
    };
    const std::string run(21, 'a');  // past the eight-byte steps, and not a multiple of eight
    for (const Case& c : {
             Case{"caf\xe9", 3},           // Latin-1
             Case{"\x80", 0},              // a lone continuation byte
             Case{"\xc0\x80", 0},          // an overlong NUL
             Case{"\xc1\xbf", 0},          // overlong
             Case{"\xe0\x9f\xbf", 0},      // an overlong three-byte form
             Case{"\xed\xa0\x80", 0},      // a surrogate (U+D800)
             Case{"\xf0\x8f\xbf\xbf", 0},  // an overlong four-byte form
             Case{"\xf4\x90\x80\x80", 0},  // past U+10FFFF
             Case{"\xf5\x80\x80\x80", 0},  // a lead byte past F4
             Case{"\xff", 0},
             Case{"ok \xe2\x82", 3},       // cut at the end
             Case{"\xe2\x28\xa1", 0},      // a second byte that continues nothing
             Case{"\xf0\x9f\x98\x28", 0},  // a fourth byte that continues nothing
             Case{run + "\xc3\xa9" + run + "\xe9" + run, 21 + 2 + 21},
             Case{run + "\xe9", 21},
         }) {
        INFO(c.text);
        const auto at = first_invalid_utf8(c.text);
        REQUIRE(at);
        CHECK(*at == c.at);
    }
}

TEST_CASE("utf8 check: a chat request with text that is not UTF-8 is refused, naming where") {
    nous::llm::ChatRequest r;
    r.model = "m";
    r.stream = false;
    r.messages = {{"user", "hello"}, {"assistant", "caf\xc3\xa9"}, {"user", "caf\xe9"}};
    auto call = nous::llm::build_chat_call(r);
    REQUIRE_FALSE(call);
    CHECK(call.error().code == nous::http::ErrorCode::invalid_argument);
    CHECK_THAT(call.error().message, Catch::Contains("message 2") && Catch::Contains("not UTF-8") &&
                                         Catch::Contains("0xE9"));
    r.messages.pop_back();
    r.system = "\xff";
    call = nous::llm::build_chat_call(r);
    REQUIRE_FALSE(call);
    CHECK_THAT(call.error().message, Catch::Contains("system prompt"));
    // In extra_body too, which no message holds.
    r.system.clear();
    r.extra_body = "{\"user\":\"\xc0\x80\"}";
    call = nous::llm::build_chat_call(r);
    REQUIRE_FALSE(call);
    CHECK_THAT(call.error().message, Catch::Contains("not UTF-8"));
    r.extra_body.clear();
    CHECK(nous::llm::build_chat_call(r));
}

TEST_CASE("utf8 check: an embeddings input that is not UTF-8 is refused before a byte") {
    nous::llm::EmbedRequest request;
    request.model = "e";
    request.base_url = "http://127.0.0.1:9";  // nothing listens: a byte sent would fail otherwise
    request.inputs = {"fine", "caf\xe9"};
    auto result = nous::llm::embed(request);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == nous::http::ErrorCode::invalid_argument);
    CHECK_THAT(result.error().message, Catch::Contains("input 1") && Catch::Contains("UTF-8"));
}
