// libFuzzer: the HTTP/1 response parser (heads, every 1xx, Content-Length,
// chunked and until-close framing), whole and in pieces, through the copying
// step (feed) and the in-place one (next_data): the same head, the same body
// bytes and the same verdict every way.

#include <string>

#include "codec/http1_parser.hpp"
#include "fuzz_support.hpp"

namespace {

struct Parsed {
    int status = 0;
    std::size_t fields = 0;
    std::string body;
    std::string verdict;
};

Parsed parse(std::string_view input, const std::vector<std::size_t>& cuts, bool in_place) {
    using namespace nous::http::detail;
    Parsed p;
    // Pieces as the transport would deliver them.
    std::vector<std::string_view> pieces;
    std::size_t pos = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : input.size();
        pieces.push_back(input.substr(pos, end - pos));
        pos = end;
    }
    HeadParser head;
    BodyFramer framer;
    bool in_body = false;
    for (std::string_view piece : pieces) {
        while (!piece.empty()) {
            if (!in_body) {
                std::size_t used = 0;
                auto status = head.feed(piece, used);
                piece.remove_prefix(used);
                if (status == HeadParser::Status::error) {
                    p.verdict = "protocol";
                    return p;
                }
                if (status == HeadParser::Status::need_more) break;
                if (head.head().status < 200) {  // every 1xx is skipped
                    head.reset();
                    continue;
                }
                p.status = head.head().status;
                p.fields = head.head().headers.size();
                framer.start(body_mode_for(head.head()), head.head().content_length.value_or(0));
                in_body = true;
                continue;
            }
            if (framer.done()) {
                p.verdict = "complete";
                return p;
            }
            std::size_t used = 0;
            if (in_place) {
                std::string_view data;
                used = framer.next_data(piece.data(), piece.size(), data);
                if (!data.empty())
                    nous::fuzz::require(data.data() >= piece.data() &&
                                        data.data() + data.size() <= piece.data() + used);
                p.body.append(data);
            } else {
                used = framer.feed(piece.data(), piece.size(), p.body);
            }
            nous::fuzz::require(used <= piece.size());
            piece.remove_prefix(used);
            if (framer.failed()) {
                p.verdict = "protocol";
                return p;
            }
            if (used == 0 && !framer.done()) break;
        }
    }
    if (!in_body)
        p.verdict = "head_cut";
    else if (framer.done())
        p.verdict = "complete";
    else
        p.verdict = framer.complete_at_eof() ? "complete_at_eof" : "truncated";
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto cuts = nous::fuzz::cuts_for(size, nous::fuzz::seed_of(input));
    Parsed whole = parse(input, {}, false);
    for (const Parsed& other :
         {parse(input, cuts, false), parse(input, {}, true), parse(input, cuts, true)}) {
        nous::fuzz::require(whole.verdict == other.verdict);
        nous::fuzz::require(whole.status == other.status && whole.fields == other.fields);
        nous::fuzz::require(whole.body == other.body);
    }
    return 0;
}
