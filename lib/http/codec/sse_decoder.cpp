// SSE following the WHATWG "event stream interpretation": fields data, event,
// id, retry; comments; CR, LF and CRLF line ends; a leading BOM; multi-line
// data joined by \n; dispatch on a blank line; no dispatch with empty data.

#include <algorithm>
#include <charconv>
#include <cstring>
#include <list>
#include <utility>

#include "codec/decoders.hpp"

namespace nous::http {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

/// A field's value: what follows the colon, less one leading space.
std::string_view field_value(std::string_view after_colon) noexcept {
    if (!after_colon.empty() && after_colon.front() == ' ') after_colon.remove_prefix(1);
    return after_colon;
}

/// One decoder core, two outputs: owned Events (feed) or views (feed_views)
/// that point into the input or the decoder's own storage. A single-line data
/// event wholly inside the input is handed out without a copy.
class SseDecoder final : public detail::SseScanner, public detail::LazyViewDecoder {
  public:
    explicit SseDecoder(std::size_t max_event_bytes)
        : max_data_(max_event_bytes), max_line_(max_event_bytes + 6 /* "data: " */) {
        last_id_ = &ids_.emplace_back();
    }
    // last_id_ points into ids_: a copy would point into the original's.
    SseDecoder(const SseDecoder&) = delete;
    SseDecoder& operator=(const SseDecoder&) = delete;

    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out,
                              bool& done) override {
        std::size_t consumed = 0;
        return feed_counting(bytes, out, done, consumed);
    }

    std::optional<Error> feed_counting(std::string_view bytes, std::vector<Event>& out, bool& done,
                                       std::size_t& consumed) override {
        drop_previous_views();  // owned events hold their own share of an id
        return run(bytes, done, consumed,
                   [&](std::string_view type, std::string_view data, bool data_is_input,
                       const EventId& id) {
                       Event e;
                       e.type.assign(type);
                       if (data_is_input)
                           e.data.assign(data);
                       else
                           e.data = std::move(data_);
                       e.id = id;
                       e.retry = retry_;
                       out.push_back(std::move(e));
                   });
    }

    std::optional<Error> feed_views(std::string_view bytes, std::vector<EventView>& out,
                                    bool& done) override {
        drop_previous_views();
        return run_views(bytes, out, done);
    }

    std::optional<Error> begin(std::string_view bytes, std::vector<EventView>& out,
                               bool& done) override {
        drop_previous_views();
        lazy_ = {};
        lazy_pos_ = 0;
        // What the general path takes first: everything when a CR may end
        // lines, at the stream's start (a BOM) or after [DONE]; else the end
        // of an event carried over from the last input, up to its blank line.
        std::size_t head = 0;
        if (done_ || skip_lf_ || bom_pos_ < kBom.size() ||
            std::memchr(bytes.data(), '\r', bytes.size()) != nullptr) {
            head = bytes.size();
        } else if (!line_.empty() || data_lines_ > 0) {
            if (line_.empty() && !bytes.empty() && bytes.front() == '\n') {
                head = 1;  // the blank line itself
            } else {
                const std::size_t blank = bytes.find("\n\n");
                head = blank == std::string_view::npos ? bytes.size() : blank + 2;
                scanned_ += head;  // looked at here, and again by the general path
            }
        }
        if (head > 0) {
            auto error = run_views(bytes.substr(0, head), out, done);
            if (error || done) return error;
        }
        lazy_ = bytes.substr(head);
        return std::nullopt;
    }

    Next next_plain(EventView& out) override {
        const std::size_t n = lazy_.size(), i = lazy_pos_;
        if (i >= n) return Next::end;
        if (!at_event_boundary()) return Next::other;  // begin() left no CR here
        const char* p = lazy_.data();
        const char* lf = static_cast<const char*>(std::memchr(p + i, '\n', n - i));
        if (!lf) return Next::other;
        const std::size_t j = static_cast<std::size_t>(lf - p);
        std::string_view value;
        if (!plain_event(p, i, j, n, value)) return Next::other;
        out.type = type_view();
        out.data = value;
        out.id = last_id_;
        out.retry = retry_;
        event_type_.clear();
        scanned_ += j + 2 - i;  // the data line and the blank line, as run() counts them
        lazy_pos_ = j + 2;
        return Next::event;
    }

    std::optional<Error> feed_rest(std::vector<EventView>& out, bool& done) override {
        const std::string_view rest = lazy_.substr(std::min(lazy_pos_, lazy_.size()));
        lazy_ = {};
        lazy_pos_ = 0;
        return run_views(rest, out, done);
    }

    std::optional<Error> finish(std::vector<Event>&) override {
        // A body that ended cleanly ends the stream normally: an event still
        // missing its blank line is discarded, as WHATWG says ("any pending
        // data must be discarded"). Only the HTTP framing decides truncation.
        line_.clear();
        data_.clear();
        data_in_input_ = false;
        data_lines_ = 0;
        event_type_.clear();
        return std::nullopt;
    }

  private:
    /// Views of the previous call are void now: drop what kept them alive.
    /// Only when there is any: a token's wake-up finds the decoder cold, and
    /// the lists' own fields were cache misses on every call.
    void drop_previous_views() {
        if (!views_hold_storage_) return;
        owned_.clear();
        while (ids_.size() > 1) ids_.pop_front();
        views_hold_storage_ = false;
    }

    std::optional<Error> run_views(std::string_view bytes, std::vector<EventView>& out,
                                   bool& done) {
        std::size_t consumed = 0;
        return run(bytes, done, consumed,
                   [&](std::string_view type, std::string_view data, bool data_is_input,
                       const EventId& id) {
                       // Written in place: a local EventView copied in by
                       // push_back was a store-forwarding stall per event (its
                       // 16-byte reloads straddled the 8-byte field stores).
                       EventView& v = out.emplace_back();
                       v.type = type;
                       if (data_is_input) {
                           v.data = data;
                       } else {
                           owned_.push_back(std::move(data_));
                           v.data = owned_.back();
                           views_hold_storage_ = true;
                       }
                       v.id = &id;
                       v.retry = retry_;
                   });
    }

    /// Between events, with nothing carried over: where a plain event may start.
    bool at_event_boundary() const noexcept {
        return !done_ && bom_pos_ >= kBom.size() && !skip_lf_ && line_.empty() && data_lines_ == 0;
    }

    /// The hot case whole: the line p[i, j) ending in an LF at j is
    /// "data: X", a blank line follows within the input, and X is within the
    /// cap and not [DONE]. Anything else takes the general path.
    bool plain_event(const char* p, std::size_t i, std::size_t j, std::size_t n,
                     std::string_view& value) const noexcept {
        if (p[j] != '\n' || j + 1 >= n || p[j + 1] != '\n' || j - i < 5 ||
            std::memcmp(p + i, "data:", 5) != 0)
            return false;
        value = field_value(std::string_view(p + i + 5, j - i - 5));
        return value.size() <= max_data_ && value != "[DONE]";
    }

    template <typename Emit>
    std::optional<Error> run(std::string_view bytes, bool& done, std::size_t& consumed,
                             Emit&& emit) {
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
        // One look for a CR in the whole input: most streams have LF line ends
        // only, and then each line needs a single memchr.
        const bool has_cr = std::memchr(p + i, '\r', n - i) != nullptr;
        while (i < n) {
            if (skip_lf_) {
                skip_lf_ = false;
                if (p[i] == '\n') {
                    ++i;
                    ++scanned_;
                    continue;
                }
            }
            // The line ends at the first CR or LF: memchr for the LF, then for a
            // CR before it (CR-only line ends are rare). New bytes only: no rescans.
            const char* lf = static_cast<const char*>(std::memchr(p + i, '\n', n - i));
            const std::size_t limit = lf ? static_cast<std::size_t>(lf - p) : n;
            const char* cr =
                has_cr ? static_cast<const char*>(std::memchr(p + i, '\r', limit - i)) : nullptr;
            const std::size_t j = cr ? static_cast<std::size_t>(cr - p) : limit;
            scanned_ += j - i + (j < n ? 1 : 0);
            if (j == n) {
                if (line_.size() + (n - i) > max_line_) return overflow(line_.size() + (n - i));
                line_.append(p + i, n - i);
                i = n;
                break;
            }
            // The hot case whole: "data: X\n\n", the event wholly in the
            // input, at an event boundary. Dispatched here, without a second
            // pass of this loop for its blank line; anything unusual (over
            // the cap, [DONE], CR line ends) takes the general path below.
            if (std::string_view value;
                line_.empty() && data_lines_ == 0 && plain_event(p, i, j, n, value)) {
                emit(type_view(), value, /*data_is_input=*/true, *last_id_);
                event_type_.clear();
                ++scanned_;  // the blank line's LF (the data line's is counted above)
                i = j + 2;
                continue;
            }
            if (p[j] == '\r') skip_lf_ = true;
            bool ok;
            if (line_.empty()) {
                if (j - i > max_line_) return overflow(j - i);
                ok = process_line(std::string_view(p + i, j - i), /*in_input=*/true, emit);
            } else {
                if (line_.size() + (j - i) > max_line_) return overflow(line_.size() + (j - i));
                line_.append(p + i, j - i);
                ok = process_line(line_, /*in_input=*/false, emit);
                line_.clear();
            }
            i = j + 1;
            if (!ok) return std::exchange(error_, std::nullopt);
            if (done_) {
                // Consume a CRLF's LF with the [DONE] event, then stop.
                if (skip_lf_ && i < n && p[i] == '\n') ++i;
                consumed = i;
                done = true;
                materialize();
                return std::nullopt;
            }
        }
        consumed = n;
        // The input goes away after this call: pending data moves to our storage.
        materialize();
        return std::nullopt;
    }

    void materialize() {
        if (!data_in_input_) return;
        data_.assign(data_view_);
        data_in_input_ = false;
    }

    std::optional<Error> overflow(std::size_t size) {
        return Error(ErrorCode::buffer_overflow, "stream event of " + std::to_string(size) +
                                                     "+ bytes exceeds the decoder cap of " +
                                                     std::to_string(max_data_) + " bytes");
    }

    /// False when the event is over the cap (the error is in error_).
    template <typename Emit>
    bool process_line(std::string_view line, bool in_input, Emit& emit) {
        if (line.empty()) {
            dispatch(emit);
            return true;
        }
        if (line.front() == ':') return true;  // comment
        // The hot case first: "data: ..." (or "data:...").
        if (line.size() >= 5 && std::memcmp(line.data(), "data:", 5) == 0) {
            return add_data(field_value(line.substr(5)), in_input);
        }
        std::string_view field = line, value;
        if (auto colon = line.find(':'); colon != std::string_view::npos) {
            field = line.substr(0, colon);
            value = field_value(line.substr(colon + 1));
        }
        if (field == "data") {
            return add_data(value, in_input);
        } else if (field == "event") {
            event_type_.assign(value);
        } else if (field == "id") {
            // Stored once; events share it (an id may be as long as the line cap).
            if (value.find('\0') == std::string_view::npos) {
                last_id_ = &ids_.emplace_back(value);  // a list's growth moves no element
                views_hold_storage_ = true;  // the older ids may be in views until the next call
            }
        } else if (field == "retry") {
            unsigned long long ms = 0;
            auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
            if (ec == std::errc() && ptr == value.data() + value.size() && !value.empty())
                retry_ = Milliseconds(static_cast<long long>(ms));
        }
        return true;
    }

    bool add_data(std::string_view value, bool in_input) {
        // The cap is on the event's data: exactly max_data_ bytes is delivered.
        const std::size_t held = data_in_input_ ? data_view_.size() : data_.size();
        const std::size_t size = held + (data_lines_ > 0 ? 1 : 0) + value.size();
        if (size > max_data_) {
            error_ = overflow(size);
            return false;
        }
        if (data_lines_ == 0 && in_input) {
            // The common case: one data line, wholly in the input. No copy yet.
            data_view_ = value;
            data_in_input_ = true;
        } else {
            materialize();
            if (data_lines_ > 0) data_ += '\n';
            data_.append(value);
        }
        ++data_lines_;
        return true;
    }

    /// A stable view of the event type: interned (few distinct names per stream).
    std::string_view type_view() {
        if (event_type_.empty()) return "message";  // the common case, inline
        return interned_type();
    }

    [[gnu::noinline]] std::string_view interned_type() {
        for (const auto& t : types_)
            if (t == event_type_) return t;
        if (types_.size() < 64) {
            types_.push_back(event_type_);
            return types_.back();
        }
        owned_.push_back(event_type_);  // a stream with endless new names: kept for this call only
        views_hold_storage_ = true;
        return owned_.back();
    }

    template <typename Emit>
    void dispatch(Emit& emit) {
        if (data_lines_ == 0) {
            event_type_.clear();
            return;
        }
        const std::string_view data = data_in_input_ ? data_view_ : std::string_view(data_);
        if (data == "[DONE]") {
            done_ = true;
        } else {
            emit(type_view(), data, data_in_input_, *last_id_);
        }
        data_.clear();
        data_in_input_ = false;
        data_lines_ = 0;
        event_type_.clear();
    }

    // What a plain event touches, first and together: at token rates each
    // wake-up finds the decoder cold, and every line of it is a cache miss.
    const std::size_t max_data_, max_line_;
    std::size_t bom_pos_ = 0;
    bool skip_lf_ = false;
    bool done_ = false;
    bool data_in_input_ = false;
    bool views_hold_storage_ = false;  ///< owned_ or older ids_ to drop at the next feed_views
    std::size_t data_lines_ = 0;
    std::string_view lazy_;     ///< the input begin() took (LazyViewDecoder)
    std::size_t lazy_pos_ = 0;  ///< where next_plain goes on
    /// ids_.back(), the last event ID: read here rather than through the
    /// list's end, which lies in a line of its own beyond them.
    const EventId* last_id_ = nullptr;
    std::optional<Milliseconds> retry_;
    std::string line_;  ///< a partial line carried over from the previous input
    std::string event_type_;
    // The rest: events of several lines or carried over, names, errors.
    // Lists, not deques: views of their elements stay valid as they grow
    // either way, but a deque allocates a 512-byte block and its map even
    // empty, 1.7 KB a stream for three that hold one ID and, at most times,
    // nothing else (docs/BENCHMARKS.md, "Scale").
    /// The event IDs (last_id_ is the last); older ones live until the next feed_views.
    std::list<EventId> ids_;
    std::string_view data_view_;  ///< the event's one data line, inside the current input
    std::string data_;  ///< the event's data when it is ours (several lines, or carried over)
    std::list<std::string> types_;  ///< interned event types: views of them stay valid
    std::list<std::string> owned_;  ///< storage of the views handed out by the last feed_views
    std::optional<Error> error_;    ///< set when process_line returns false
};

}  // namespace

std::unique_ptr<Decoder> make_sse_decoder(std::size_t max_event_bytes) {
    return std::make_unique<SseDecoder>(max_event_bytes);
}

namespace detail {

std::unique_ptr<SseScanner> make_sse_scanner(std::size_t max_event_bytes) {
    return std::make_unique<SseDecoder>(max_event_bytes);
}

}  // namespace detail

}  // namespace nous::http
