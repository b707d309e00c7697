#pragma once
// The request body build_chat_call makes, parsed, for the tests that look at
// a format's fields (the test fails when the call is refused).

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "nous/http/json.hpp"
#include "nous/llm/request.hpp"

namespace nous::test {

inline std::shared_ptr<rapidjson::Document> body_of(const nous::llm::ChatRequest& r) {
    auto call = nous::llm::build_chat_call(r);
    INFO((call ? std::string() : call.error().message));
    REQUIRE(call);
    auto doc = nous::http::parse_json(call->body);
    REQUIRE(doc);
    return doc.value();
}

}  // namespace nous::test
