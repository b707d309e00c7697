// A provider's stream events into Deltas: the format's own reader
// (formats/wire_format.hpp) takes each event, by its fast reader when it can
// and through the reused document otherwise.

#include "formats/wire_format.hpp"
#include "json/answer_utf8.hpp"
#include "json/event_json.hpp"
#include "json/provider_json.hpp"
#include "nous/llm/delta.hpp"

namespace nous::llm {

DeltaParser::DeltaParser(Provider provider)
    : reader_(detail::wire_format(provider).event_reader()),
      json_(std::make_unique<detail::EventJson>()) {}
DeltaParser::~DeltaParser() = default;
DeltaParser::DeltaParser(DeltaParser&&) noexcept = default;
DeltaParser& DeltaParser::operator=(DeltaParser&&) noexcept = default;

std::optional<Error> DeltaParser::parse(const nous::http::Event& event, std::vector<Delta>& out) {
    nous::http::EventView view;
    view.type = event.type;
    view.data = event.data;
    return parse(view, out);
}

std::optional<Error> DeltaParser::parse(const nous::http::EventView& event,
                                        std::vector<Delta>& out) {
    return parse_event(event, out, nullptr);
}

std::optional<Error> DeltaParser::parse_event(const nous::http::EventView& event,
                                              std::vector<Delta>& out,
                                              std::optional<std::string_view>* text_only) {
    std::string_view data = event.data;
    while (!data.empty() && (data.front() == ' ' || data.front() == '\n' || data.front() == '\r'))
        data.remove_prefix(1);
    if (data.empty()) return std::nullopt;  // keep-alive
    const std::size_t before = out.size();
    // The common token events without a document; anything else below.
    const bool read_fast = fast_paths_ && reader_->read_fast(event, data, *json_, out, text_only);
    if (!read_fast)
        if (auto e = parse_document(event, data, out)) return e;
    // What the readers hand on is UTF-8 (answer_utf8.hpp): ASCII told inline.
    const std::span<const Delta> added = std::span<const Delta>(out).subspan(before);
    const std::string_view text = text_only && *text_only ? **text_only : std::string_view();
    if (detail::all_ascii(added, text)) return std::nullopt;
    return detail::non_utf8_answer(added, text);
}

/// A function of its own, so that the document's locals are not in the frame
/// every token's event runs in.
[[gnu::noinline]] std::optional<Error> DeltaParser::parse_document(
    const nous::http::EventView& event, std::string_view data, std::vector<Delta>& out) {
    // Depth-limited: a provider's bytes are server bytes.
    std::string why;
    const detail::Value* parsed = json_->parse(data, why);
    if (!parsed) return detail::malformed(why);
    return reader_->read_document(event, *parsed, out);
}

}  // namespace nous::llm
