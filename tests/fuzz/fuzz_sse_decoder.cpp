// libFuzzer: the sse decoder, whole and in pieces (same output required), and
// through the one-at-a-time view path Stream::next_view uses (the same again).

#include "codec/decoders.hpp"
#include "decoder_fuzz.hpp"

namespace {

/// The events through LazyViewDecoder (begin, next_plain, feed_rest), each
/// piece in a temporary that dies after its views are copied.
nous::fuzz::DecodeResult decode_lazily(std::string_view input,
                                       const std::vector<std::size_t>& cuts) {
    auto decoder = nous::http::detail::make_sse_scanner(4096);
    auto* lazy = dynamic_cast<nous::http::detail::LazyViewDecoder*>(decoder.get());
    nous::fuzz::require(lazy != nullptr);
    nous::fuzz::DecodeResult r;
    auto copy = [&](const nous::http::EventView& v) { r.events.push_back(v.to_event()); };
    std::size_t pos = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : input.size();
        auto piece = std::make_unique<std::string>(input.substr(pos, end - pos));
        pos = end;
        bool done = false;
        std::vector<nous::http::EventView> out;
        auto e = lazy->begin(*piece, out, done);
        for (const auto& v : out) copy(v);
        if (!e && !done) {
            nous::http::EventView one;
            while (lazy->next_plain(one) == nous::http::detail::LazyViewDecoder::Next::event)
                copy(one);
            out.clear();
            e = lazy->feed_rest(out, done);
            for (const auto& v : out) copy(v);
        }
        if (nous::fuzz::ended(e, done, r)) return r;
    }
    std::vector<nous::http::Event> rest;
    auto e = decoder->finish(rest);
    r.outcome = e ? std::string(nous::http::to_string(e->code)) : "clean";
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A small cap so that the overflow path is reached too.
    auto make = [] { return nous::http::make_sse_decoder(4096); };
    nous::fuzz::check_split_invariance(make, data, size);
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto cuts = nous::fuzz::cuts_for(size, nous::fuzz::seed_of(input));
    const auto owned = nous::fuzz::decode(make, input, cuts);
    const auto lazy = decode_lazily(input, cuts);
    nous::fuzz::require(owned.outcome == lazy.outcome);
    nous::fuzz::require(owned.events.size() == lazy.events.size());
    for (std::size_t i = 0; i < owned.events.size(); ++i) {
        const auto &a = owned.events[i], &b = lazy.events[i];
        nous::fuzz::require(a.type == b.type && a.data == b.data && a.id == b.id &&
                            a.retry == b.retry);
    }
    return 0;
}
