#pragma once
// Runs a decoder over every fixture in a folder three ways (whole, byte by
// byte, random splits) and checks each against the golden .expect file.

#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "codec/decoders.hpp"

namespace nous::test {

struct Decoded {
    std::vector<nous::http::Event> events;
    std::string outcome;  // clean | done | truncated | buffer_overflow | malformed | protocol
    std::uint64_t scanned = 0;
    bool operator==(const Decoded& o) const {
        if (events.size() != o.events.size() || outcome != o.outcome) return false;
        for (std::size_t i = 0; i < events.size(); ++i) {
            const auto &a = events[i], &b = o.events[i];
            if (a.type != b.type || a.data != b.data || a.id != b.id || a.retry != b.retry)
                return false;
        }
        return true;
    }
};

inline std::string outcome_of(const nous::http::Error& e) {
    if (e.code == nous::http::ErrorCode::malformed_stream) return "malformed";
    return std::string(nous::http::to_string(e.code));
}

using DecoderFactory = std::function<std::unique_ptr<nous::http::Decoder>()>;

/// How run_decoder feeds the decoder: owned events (feed), views of a whole
/// piece (feed_views), or views one at a time (LazyViewDecoder: begin, then
/// next_plain, then feed_rest), as Stream::next_view takes them.
enum class Path { owned, views, lazy };

inline void copy_views(const std::vector<nous::http::EventView>& views, Decoded& d) {
    for (const auto& v : views) d.events.push_back(v.to_event());
}

/// The view paths: each piece lives in a temporary that dies right after its
/// views are copied out, so a view that outlived its call would be a
/// use-after-free under ASan.
inline Decoded run_decoder(const DecoderFactory& make, std::string_view input,
                           const std::vector<std::size_t>& cuts, Path path = Path::owned) {
    auto decoder = make();
    auto* view_decoder = dynamic_cast<nous::http::detail::ViewDecoder*>(decoder.get());
    auto* lazy_decoder = dynamic_cast<nous::http::detail::LazyViewDecoder*>(decoder.get());
    Decoded d;
    std::size_t pos = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        std::size_t end = i < cuts.size() ? cuts[i] : input.size();
        bool done = false;
        std::optional<nous::http::Error> e;
        if (path == Path::lazy && lazy_decoder) {
            auto piece = std::make_unique<std::string>(input.substr(pos, end - pos));
            std::vector<nous::http::EventView> out;
            e = lazy_decoder->begin(*piece, out, done);
            copy_views(out, d);
            if (!e && !done) {
                std::vector<nous::http::EventView> one(1);
                while (lazy_decoder->next_plain(one[0]) ==
                       nous::http::detail::LazyViewDecoder::Next::event)
                    copy_views(one, d);
                out.clear();
                e = lazy_decoder->feed_rest(out, done);
                copy_views(out, d);
            }
            piece.reset();
        } else if (path == Path::views && view_decoder) {
            auto piece = std::make_unique<std::string>(input.substr(pos, end - pos));
            std::vector<nous::http::EventView> out;
            e = view_decoder->feed_views(*piece, out, done);
            copy_views(out, d);
            piece.reset();
        } else {
            e = decoder->feed(input.substr(pos, end - pos), d.events, done);
        }
        pos = end;
        if (e) {
            d.outcome = outcome_of(*e);
            return d;
        }
        if (done) {
            d.outcome = "done";
            return d;
        }
    }
    auto e = decoder->finish(d.events);
    d.outcome = e ? outcome_of(*e) : "clean";
    if (auto* counting = dynamic_cast<nous::http::detail::CountingDecoder*>(decoder.get()))
        d.scanned = counting->bytes_scanned();
    return d;
}

inline std::vector<std::size_t> every_byte(std::size_t n) {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < n; ++i) cuts.push_back(i);
    return cuts;
}

inline std::vector<std::size_t> random_cuts(std::size_t n, std::mt19937& rng) {
    std::vector<std::size_t> cuts;
    if (n < 2) return cuts;
    std::uniform_int_distribution<std::size_t> pick(1, n - 1);
    int count = std::uniform_int_distribution<int>(1, 10)(rng);
    for (int i = 0; i < count; ++i) cuts.push_back(pick(rng));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    return cuts;
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline Decoded parse_expect(const std::string& text) {
    Decoded d;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        rapidjson::Document doc;
        doc.Parse(line.c_str());
        REQUIRE_FALSE(doc.HasParseError());
        if (doc.HasMember("outcome")) {
            d.outcome = doc["outcome"].GetString();
            continue;
        }
        nous::http::Event e;
        e.type = doc["type"].GetString();
        e.data.assign(doc["data"].GetString(), doc["data"].GetStringLength());
        e.id = doc["id"].GetString();
        if (doc.HasMember("retry")) e.retry = nous::http::Milliseconds(doc["retry"].GetInt64());
        d.events.push_back(std::move(e));
    }
    return d;
}

/// Every fixture in `folder`: whole, byte by byte, and 50 random splits give the
/// golden result; the work is linear (bytes scanned at most 2x the input + 8).
inline int check_fixtures(const std::string& folder, const DecoderFactory& make) {
    std::filesystem::path dir = std::filesystem::path(NOUS_FIXTURES) / folder;
    std::mt19937 rng(4242);
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".input") continue;
        ++count;
        const std::string stem = entry.path().stem().string();
        INFO(folder << "/" << stem);
        const std::string input = slurp(entry.path());
        const Decoded want = parse_expect(slurp(dir / (stem + ".expect")));
        Decoded whole = run_decoder(make, input, {});
        CHECK(whole == want);
        if (!(whole == want)) {
            for (auto& e : whole.events)
                UNSCOPED_INFO("got " << e.type << " [" << e.data << "] id=" << e.id);
            CHECK(whole.outcome == want.outcome);
        }
        CHECK(whole.scanned <= 2 * input.size() + 8);
        Decoded bytes = run_decoder(make, input, every_byte(input.size()));
        CHECK(bytes == want);
        CHECK(bytes.scanned <= 2 * input.size() + 8);
        for (int i = 0; i < 50; ++i)
            CHECK(run_decoder(make, input, random_cuts(input.size(), rng)) == want);
        // The zero-copy paths give the same events, however the input is cut.
        if (dynamic_cast<nous::http::detail::ViewDecoder*>(make().get())) {
            CHECK(run_decoder(make, input, {}, Path::views) == want);
            CHECK(run_decoder(make, input, every_byte(input.size()), Path::views) == want);
            for (int i = 0; i < 50; ++i)
                CHECK(run_decoder(make, input, random_cuts(input.size(), rng), Path::views) ==
                      want);
        }
        if (dynamic_cast<nous::http::detail::LazyViewDecoder*>(make().get())) {
            const Decoded lazy_whole = run_decoder(make, input, {}, Path::lazy);
            CHECK(lazy_whole == want);
            CHECK(lazy_whole.scanned <= 2 * input.size() + 8);
            const Decoded lazy_bytes =
                run_decoder(make, input, every_byte(input.size()), Path::lazy);
            CHECK(lazy_bytes == want);
            CHECK(lazy_bytes.scanned <= 2 * input.size() + 8);
            for (int i = 0; i < 50; ++i)
                CHECK(run_decoder(make, input, random_cuts(input.size(), rng), Path::lazy) == want);
        }
    }
    return count;
}

}  // namespace nous::test
