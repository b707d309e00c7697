// The raw format: the body bytes as received (after transfer decoding), up
// to and including an SSE `data: [DONE]` event, which an SSE scanner beside
// them finds.

#include "codec/decoders.hpp"

namespace nous::http {

namespace {

/// Raw body bytes as events; an SSE decoder alongside finds the end of [DONE].
class RawDecoder final : public detail::CountingDecoder {
  public:
    explicit RawDecoder(std::size_t max_event_bytes)
        : sse_(detail::make_sse_scanner(max_event_bytes)) {}
    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out,
                              bool& done) override {
        std::size_t consumed = 0;
        std::optional<Error> e;
        if (lf_may_follow_) {
            // [DONE] ended on a CR at the end of the last piece: its LF belongs to it.
            lf_may_follow_ = false;
            consumed = !bytes.empty() && bytes.front() == '\n' ? 1 : 0;
            done = true;
        } else {
            std::vector<Event> ignored;
            e = sse_->feed_counting(bytes, ignored, done, consumed);
            scanned_ = sse_->bytes_scanned();
            if (done && consumed == bytes.size() && consumed > 0 && bytes.back() == '\r') {
                lf_may_follow_ = true;
                done = false;
            }
        }
        if (consumed > 0) {
            Event raw;
            raw.type = "raw";
            raw.data.assign(bytes.substr(0, consumed));
            out.push_back(std::move(raw));
        }
        return e;
    }
    std::optional<Error> finish(std::vector<Event>&) override { return std::nullopt; }

  private:
    std::unique_ptr<detail::SseScanner> sse_;
    bool lf_may_follow_ = false;
};

}  // namespace

std::unique_ptr<Decoder> make_raw_decoder(std::size_t max_event_bytes) {
    return std::make_unique<RawDecoder>(max_event_bytes);
}

}  // namespace nous::http
