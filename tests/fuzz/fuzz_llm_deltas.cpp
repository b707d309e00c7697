// libFuzzer: the provider delta parsers and the accumulator. Any bytes, as an
// SSE body of any provider and as a non-streamed response: never a crash, the
// same message whole or in pieces, from the fast readers of common events as
// from the document read, and from the three-argument parse (bare text handed
// back as text) as from the deltas; a message read without a malformed event
// is UTF-8 throughout, as its JSON must be. The same bytes as a --messages
// conversation: read, then built into every format's request, and each
// message written back reads the same.

#include <string>

#include "fuzz_support.hpp"
#include "json/utf8_check.hpp"
#include "nous/http/json.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/detail/delta_parser_access.hpp"

namespace {

/// How the events are parsed: the fast readers on or off, or (lean) the
/// three-argument parse with bare text events added as text, as run_chat does.
enum class Parse { fast, document, lean };

std::string assemble(nous::llm::Provider provider, std::string_view bytes,
                     const std::vector<std::size_t>& cuts, Parse how = Parse::fast) {
    auto sse = nous::http::make_sse_decoder(4096);
    nous::llm::DeltaParser parser(provider);
    nous::llm::detail::DeltaParserAccess::use_fast_paths(parser, how != Parse::document);
    nous::llm::Accumulator accumulator;
    std::vector<nous::http::Event> events;
    std::vector<nous::llm::Delta> deltas;
    std::string verdict;
    std::size_t pos = 0;
    bool done = false;
    for (std::size_t i = 0; i <= cuts.size() && !done; ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : bytes.size();
        events.clear();
        auto e = sse->feed(bytes.substr(pos, end - pos), events, done);
        pos = end;
        for (const auto& event : events) {
            deltas.clear();
            std::optional<std::string_view> text_only;
            nous::http::EventView view;
            view.type = event.type;
            view.data = event.data;
            if (auto malformed = how == Parse::lean ? nous::llm::detail::DeltaParserAccess::parse(
                                                          parser, view, deltas, text_only)
                                                    : parser.parse(event, deltas))
                verdict += "!";
            if (text_only) {
                nous::fuzz::require(deltas.empty());
                accumulator.add_text(*text_only);
            }
            for (const auto& d : deltas) accumulator.add(d);
        }
        if (e) return verdict + "error";
    }
    auto result = accumulator.result();
    return verdict + nous::llm::to_json(result) + result.stream_error.value_or("");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    for (auto provider : {nous::llm::Provider::openai, nous::llm::Provider::anthropic,
                          nous::llm::Provider::gemini, nous::llm::Provider::openai_responses}) {
        const std::string whole = assemble(provider, bytes, {});
        const std::string split =
            assemble(provider, bytes, nous::fuzz::cuts_for(size, nous::fuzz::seed_of(bytes)));
        nous::fuzz::require(whole == split);
        nous::fuzz::require(whole == assemble(provider, bytes, {}, Parse::document));
        nous::fuzz::require(whole == assemble(provider, bytes, {}, Parse::lean));
        if (whole.find('!') == std::string::npos)
            nous::fuzz::require(!nous::llm::detail::first_invalid_utf8(whole));
        if (auto answer = nous::llm::parse_chat_response(provider, bytes))
            nous::fuzz::require(!nous::llm::detail::first_invalid_utf8(to_json(answer.value())));
    }
    if (auto conversation = nous::llm::messages_from_json(bytes)) {
        nous::llm::ChatRequest request;
        request.model = "m";
        request.messages = conversation.value();
        request.reasoning_effort = nous::llm::ReasoningEffort::low;
        for (auto provider : {nous::llm::Provider::openai, nous::llm::Provider::anthropic,
                              nous::llm::Provider::gemini, nous::llm::Provider::openai_responses}) {
            request.provider = provider;
            if (auto call = nous::llm::build_chat_call(request))
                nous::fuzz::require(nous::http::parse_json(call->body).ok());
        }
        for (const auto& m : conversation.value()) {
            auto again = nous::llm::messages_from_json("[" + nous::llm::message_to_json(m) + "]");
            nous::fuzz::require(again.ok() && again->size() == 1);
            nous::fuzz::require(nous::llm::message_to_json(again.value()[0]) ==
                                nous::llm::message_to_json(m));
        }
    }
    (void)nous::llm::tools_from_json(bytes);
    return 0;
}
