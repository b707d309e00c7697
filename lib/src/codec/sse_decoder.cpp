// SSE following the WHATWG "event stream interpretation": fields data, event,
// id, retry; comments; CR, LF and CRLF line ends; a leading BOM; multi-line
// data joined by \n; dispatch on a blank line; no dispatch with empty data.

#include <algorithm>
#include <charconv>

#include "codec/decoders.hpp"

namespace nous::http {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

class SseDecoder final : public detail::CountingDecoder {
public:
    explicit SseDecoder(std::size_t max_event_bytes)
        : max_data_(max_event_bytes), max_line_(max_event_bytes + 6 /* "data: " */) {}

    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool& done) override {
        std::size_t consumed = 0;
        return feed_counting(bytes, out, done, consumed);
    }

    /// As feed(), and tells how many bytes were consumed (all, or up to the end of [DONE]).
    std::optional<Error> feed_counting(std::string_view bytes, std::vector<Event>& out, bool& done,
                                       std::size_t& consumed) {
        consumed = 0;
        if (done_) {
            done = true;
            return std::nullopt;
        }
        std::size_t i = 0;
        while (bom_pos_ < kBom.size() && i < bytes.size()) {
            if (bytes[i] != kBom[bom_pos_]) {
                // Not a BOM after all: the bytes taken so far are line content.
                line_.append(kBom.substr(0, bom_pos_));
                bom_pos_ = kBom.size();
                break;
            }
            ++bom_pos_;
            ++i;
        }
        const char* p = bytes.data();
        const std::size_t n = bytes.size();
        while (i < n) {
            if (skip_lf_) {
                skip_lf_ = false;
                if (p[i] == '\n') {
                    ++i;
                    ++scanned_;
                    continue;
                }
            }
            // Find the end of the line in the new bytes only: no rescans.
            std::size_t j = i;
            while (j < n && p[j] != '\n' && p[j] != '\r') ++j;
            scanned_ += j - i + (j < n ? 1 : 0);
            if (j == n) {
                if (line_.size() + (n - i) > max_line_) return overflow(line_.size() + (n - i));
                line_.append(p + i, n - i);
                i = n;
                break;
            }
            if (p[j] == '\r') skip_lf_ = true;
            std::optional<Error> e;
            if (line_.empty()) {
                if (j - i > max_line_) return overflow(j - i);
                e = process_line(std::string_view(p + i, j - i), out);
            } else {
                if (line_.size() + (j - i) > max_line_) return overflow(line_.size() + (j - i));
                line_.append(p + i, j - i);
                e = process_line(line_, out);
                line_.clear();
            }
            i = j + 1;
            if (e) return e;
            if (done_) {
                // Consume a CRLF's LF with the [DONE] event, then stop.
                if (skip_lf_ && i < n && p[i] == '\n') ++i;
                consumed = i;
                done = true;
                return std::nullopt;
            }
        }
        consumed = n;
        return std::nullopt;
    }

    std::optional<Error> finish(std::vector<Event>&) override {
        // A body that ended cleanly ends the stream normally: an event still
        // missing its blank line is discarded, as WHATWG says ("any pending
        // data must be discarded"). Only the HTTP framing decides truncation.
        line_.clear();
        data_.clear();
        event_type_.clear();
        return std::nullopt;
    }

private:
    std::optional<Error> overflow(std::size_t size) {
        return Error(ErrorCode::buffer_overflow, "stream event of " + std::to_string(size) +
                                                     "+ bytes exceeds the decoder cap of " +
                                                     std::to_string(max_data_) + " bytes");
    }

    std::optional<Error> process_line(std::string_view line, std::vector<Event>& out) {
        if (line.empty()) return dispatch(out);
        if (line.front() == ':') return std::nullopt;  // comment
        std::string_view field = line, value;
        if (auto colon = line.find(':'); colon != std::string_view::npos) {
            field = line.substr(0, colon);
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            // The cap is on the event's data: exactly max_data_ bytes is delivered.
            std::size_t size = data_.size() + (data_lines_ > 0 ? 1 : 0) + value.size();
            if (size > max_data_) return overflow(size);
            if (data_lines_ > 0) data_ += '\n';
            data_.append(value);
            ++data_lines_;
        } else if (field == "event") {
            event_type_.assign(value);
        } else if (field == "id") {
            // Stored once; events share it (an id may be as long as the line cap).
            if (value.find('\0') == std::string_view::npos) last_id_ = EventId(value);
        } else if (field == "retry") {
            unsigned long long ms = 0;
            auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
            if (ec == std::errc() && ptr == value.data() + value.size() && !value.empty())
                retry_ = Milliseconds(static_cast<long long>(ms));
        }
        return std::nullopt;
    }

    std::optional<Error> dispatch(std::vector<Event>& out) {
        if (data_lines_ == 0) {
            event_type_.clear();
            return std::nullopt;
        }
        if (data_ == "[DONE]") {
            done_ = true;
        } else {
            Event e;
            e.type = event_type_.empty() ? "message" : event_type_;
            e.data = std::move(data_);
            e.id = last_id_;
            e.retry = retry_;
            out.push_back(std::move(e));
        }
        data_.clear();
        data_lines_ = 0;
        event_type_.clear();
        return std::nullopt;
    }

    const std::size_t max_data_, max_line_;
    std::size_t bom_pos_ = 0;
    bool skip_lf_ = false;
    bool done_ = false;
    std::string line_;
    std::string data_;
    std::size_t data_lines_ = 0;
    std::string event_type_;
    EventId last_id_;
    std::optional<Milliseconds> retry_;
};

/// Raw body bytes as events; an SSE decoder alongside finds the end of [DONE].
class RawDecoder final : public detail::CountingDecoder {
public:
    explicit RawDecoder(std::size_t max_event_bytes) : sse_(max_event_bytes) {}
    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool& done) override {
        std::size_t consumed = 0;
        std::optional<Error> e;
        if (lf_may_follow_) {
            // [DONE] ended on a CR at the end of the last piece: its LF belongs to it.
            lf_may_follow_ = false;
            consumed = !bytes.empty() && bytes.front() == '\n' ? 1 : 0;
            done = true;
        } else {
            std::vector<Event> ignored;
            e = sse_.feed_counting(bytes, ignored, done, consumed);
            scanned_ = sse_.bytes_scanned();
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
    SseDecoder sse_;
    bool lf_may_follow_ = false;
};

}  // namespace

std::unique_ptr<Decoder> make_sse_decoder(std::size_t max_event_bytes) {
    return std::make_unique<SseDecoder>(max_event_bytes);
}

std::unique_ptr<Decoder> make_raw_decoder(std::size_t max_event_bytes) {
    return std::make_unique<RawDecoder>(max_event_bytes);
}

namespace detail {

Error malformed_stream(std::string message) {
    Error e(ErrorCode::protocol, "malformed stream: " + std::move(message));
    return e;
}

}  // namespace detail

bool is_malformed_stream(const Error& error) noexcept {
    return error.code == ErrorCode::protocol && error.message.rfind("malformed stream: ", 0) == 0;
}
}  // namespace nous::http
