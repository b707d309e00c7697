#pragma once
// One decoder, fed whole and in pieces: the events and the outcome must be
// the same either way, and nothing may crash, leak or overflow.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "nous/http/stream.hpp"

namespace nous::fuzz {

struct DecodeResult {
    std::vector<nous::http::Event> events;
    std::string outcome;
};

/// A decoder's error as an outcome name ("malformed" for a malformed stream).
inline std::string outcome_of(const nous::http::Error& e) {
    return e.code == nous::http::ErrorCode::malformed_stream
               ? "malformed"
               : std::string(nous::http::to_string(e.code));
}

/// The end of a decode: an error, [DONE], or nothing yet (false: go on).
inline bool ended(const std::optional<nous::http::Error>& e, bool done, DecodeResult& r) {
    if (e)
        r.outcome = outcome_of(*e);
    else if (done)
        r.outcome = "done";
    return e || done;
}

template <typename Make>
DecodeResult decode(Make make, std::string_view input, const std::vector<std::size_t>& cuts) {
    auto decoder = make();
    DecodeResult r;
    std::size_t pos = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : input.size();
        bool done = false;
        auto e = decoder->feed(input.substr(pos, end - pos), r.events, done);
        pos = end;
        if (ended(e, done, r)) return r;
    }
    auto e = decoder->finish(r.events);
    r.outcome = e ? std::string(nous::http::to_string(e->code)) : "clean";
    return r;
}

/// `pieces_are_events`: the raw format hands out the body as received, so
/// only the bytes it delivers (not their cutting into events) must agree.
template <typename Make>
void check_split_invariance(Make make, const std::uint8_t* data, std::size_t size,
                            bool pieces_are_events = false) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto whole = decode(make, input, {});
    auto split = decode(make, input, cuts_for(size, seed_of(input)));
    require(whole.outcome == split.outcome);
    if (pieces_are_events) {
        std::string a, b;
        for (const auto& e : whole.events) a += e.data;
        for (const auto& e : split.events) b += e.data;
        require(a == b);
        return;
    }
    require(whole.events.size() == split.events.size());
    for (std::size_t i = 0; i < whole.events.size(); ++i) {
        const auto &a = whole.events[i], &b = split.events[i];
        require(a.type == b.type && a.data == b.data && a.id == b.id && a.retry == b.retry);
    }
}

}  // namespace nous::fuzz
