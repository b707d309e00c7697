// The Stream handle: body pieces from its source into items through a
// decoder, views or owned copies, cancellation by handle or shared token.

#include "nous/http/stream.hpp"

#include "codec/decoders.hpp"
#include "core/cancel.hpp"
#include "core/config.hpp"
#include "stream/content_watch.hpp"
#include "stream/stream_backends.hpp"

namespace nous::http {

// ---- the handle --------------------------------------------------------------

namespace {
/// A source's next piece, built straight into the stream's `current` by
/// optional::emplace (the conversion's prvalue is the piece itself). A piece
/// returned and then moved in was one more piece's worth of cold stack lines
/// at every read, and a read of both pieces' far ends.
struct NextPiece {
    ChunkSource& source;
    operator ChunkSource::Piece() const { return source.next(); }
};
}  // namespace

/// The handle's state. It is also what a caller's shared token
/// (Options::cancel) interrupts: a cancel of that token ends this stream as
/// Stream::cancel() does, whichever backend made it; and what the content
/// deadlines interrupt (Options::event_idle_timeout), the same way.
struct Stream::State final : detail::CancelTarget, detail::ContentDeadlineTarget {
    // What each event touches, first and together (at token rates a
    // wake-up finds this state cold, and every line of it is a cache miss):
    // from `source` to `views`, 88 bytes.
    std::unique_ptr<ChunkSource> source;
    /// The same source, when it hands out data as views (the built-in ones):
    /// a token's read then builds no Piece.
    detail::ViewSource* view_source = nullptr;
    /// The decoder (`decoder` below), when it hands out views one at a time
    /// (SSE): the plain events of `current` come from it, after `views`,
    /// while `lazy` is set.
    detail::LazyViewDecoder* lazy_decoder = nullptr;
    /// `content_watch` when there is one, else null: what a token tests,
    /// here, rather than the optional's flag 400 bytes further on.
    detail::ContentWatch* watch = nullptr;
    bool lazy = false;
    /// After the views: one terminal item (done or an error), then nothing.
    enum class Terminal { none, done, error } terminal = Terminal::none;
    bool finished = false;  ///< no more pieces will be read from the source
    bool cancel_reported = false;
    /// `current` holds bytes of its own, which go back to the source
    /// (recycle) once its views are void.
    bool current_owned = false;
    std::atomic<bool> cancelled{false};
    std::atomic<bool> done_seen{false};
    std::atomic<std::uint64_t> items{0};
    std::size_t view_pos = 0;
    std::vector<EventView> views;
    // Read at a stream's start and end, or by decoders without a lazy path.
    std::unique_ptr<Decoder> decoder;
    detail::ViewDecoder* view_decoder = nullptr;  ///< the same decoder, when it hands out views
    /// The bytes the views point into, unless the view source's data views
    /// do. Built in place by each next() (see NextPiece): none before the first.
    std::optional<ChunkSource::Piece> current;
    /// Registered with the content watcher, after `source` so that it is
    /// dropped before the source it interrupts is destroyed.
    std::optional<detail::ContentWatch> content_watch;
    /// Which events reset the content deadlines (Options::is_content_event); empty: all.
    std::function<bool(const EventView&)> is_content_event;
    // The rest: decoders without views, the terminal error, the shared token.
    std::vector<Event> scratch;           ///< events of decoders without views (views point here)
    std::optional<Error> terminal_error;  ///< set with terminal == error
    /// Registered with Options::cancel; last, so that it is dropped before
    /// the source it interrupts is destroyed.
    std::optional<detail::CancelRegistration> shared_cancel;

    /// On the watcher's thread, under its lock: as quick as interrupt().
    void content_deadline_passed() noexcept override {
        if (source) source->cancel();
    }

    /// The error a source's failure becomes: a passed content deadline or a
    /// cancel explains it better than the source's own words.
    Error failure(Error&& from_source) const {
        if (content_watch)
            if (auto expired = content_watch->expired()) return std::move(*expired);
        if (cancelled.load()) return Error(ErrorCode::cancelled, "stream cancelled");
        return std::move(from_source);
    }

    /// On the cancelling thread, under the token's lock: quick, and never
    /// back into that token (the source has a token of its own).
    void interrupt() noexcept override {
        cancelled.store(true);
        if (source) source->cancel();
    }

    /// An event goes to the caller: counted, and the content deadlines reset
    /// when it is content.
    void delivered(const EventView& event) {
        // One writer (this thread): a plain store, no read-modify-write per event.
        items.store(items.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if (watch && (!is_content_event || is_content_event(event))) watch->content();
    }

    void end_with(Error e) {
        terminal = Terminal::error;
        terminal_error = std::move(e);
        finished = true;
    }

    /// Views of the events a decoder without a view path put into `scratch`.
    void views_of_scratch() {
        for (const Event& e : scratch) {
            EventView v;
            v.type = e.type;
            v.data = e.data;
            v.id = &e.id;
            v.retry = e.retry;
            views.push_back(v);
        }
    }

    void decode(std::string_view bytes) {
        lazy = false;
        views.clear();
        view_pos = 0;
        bool done = false;
        // Each decoder's error is built where it is tested (no empty
        // optional<Error> assigned to: at a token's rate one more is a cold
        // stack line).
        if (lazy_decoder) {
            // Decoded as next_view asks: what the general path must take first
            // into `views`, then the plain events one by one, then the rest
            // through decode_rest().
            if (auto error = lazy_decoder->begin(bytes, views, done)) return fail(*error);
            lazy = !done;
        } else if (!decode_all(bytes, done)) {
            return;
        }
        if (done) after_done();
    }

    /// decode() by a decoder that takes a piece at once: false when it failed.
    /// Out of decode()'s frame, so its error may start empty here.
    [[gnu::noinline]] bool decode_all(std::string_view bytes, bool& done) {
        std::optional<Error> error;
        if (view_decoder) {
            error = view_decoder->feed_views(bytes, views, done);
        } else {
            scratch.clear();
            error = decoder->feed(bytes, scratch, done);
            views_of_scratch();
        }
        if (!error) return true;
        fail(*error);
        return false;
    }

    /// The decoder failed: its error ends the stream (out of decode()'s frame).
    [[gnu::noinline]] void fail(Error& error) { end_with(std::move(error)); }

    /// What the lazy decoder's plain events left of the piece, into `views`.
    void decode_rest() {
        lazy = false;
        views.clear();
        view_pos = 0;
        bool done = false;
        if (auto error = lazy_decoder->feed_rest(views, done)) return end_with(std::move(*error));
        if (done) after_done();
    }

    // The branches of next_view() that a token never takes, each a function
    // of its own: their temporaries (an Error is 168 bytes) are not in the
    // frame every event runs in, which stays a few lines.

    /// A cancel ends the stream at once, ahead of items already decoded.
    [[gnu::noinline]] void report_cancel() {
        cancel_reported = true;
        if (!finished || lazy || view_pos < views.size() || terminal != Terminal::none) {
            views.clear();
            view_pos = 0;
            lazy = false;
            end_with(Error(ErrorCode::cancelled, "stream cancelled"));
        }
    }

    /// The source's next piece when it has no data view (a source of owned
    /// pieces, the body's end, a failure): decoded, or the stream's end.
    [[gnu::noinline]] void next_piece() {
        ChunkSource::Piece& piece = current.emplace(NextPiece{*source});
        switch (piece.kind) {
            case ChunkSource::Piece::Kind::data:
                current_owned = piece.view.empty();
                decode(piece.view.empty() ? std::string_view(piece.bytes) : piece.view);
                break;
            case ChunkSource::Piece::Kind::end: {
                views.clear();
                view_pos = 0;
                scratch.clear();
                auto error = decoder->finish(scratch);
                views_of_scratch();
                finished = true;
                // A content deadline that passed stopped the source: whatever
                // it reports, the body did not end as the server meant it.
                if (content_watch)
                    if (auto expired = content_watch->expired()) error = std::move(expired);
                if (error) end_with(std::move(*error));
                break;
            }
            case ChunkSource::Piece::Kind::error:
                views.clear();
                view_pos = 0;
                end_with(failure(std::move(*piece.error)));
                break;
        }
    }

    /// [DONE] decoded: the views, then the done item.
    void after_done() {
        terminal = Terminal::done;
        finished = true;
        done_seen = true;
        source->finish_after_done();
    }
};

Stream::Stream(std::unique_ptr<ChunkSource> source, std::unique_ptr<Decoder> decoder)
    : state_(std::make_unique<State>()) {
    state_->source = std::move(source);
    state_->view_source = dynamic_cast<detail::ViewSource*>(state_->source.get());
    state_->decoder = decoder ? std::move(decoder) : make_sse_decoder();
    state_->view_decoder = dynamic_cast<detail::ViewDecoder*>(state_->decoder.get());
    state_->lazy_decoder = dynamic_cast<detail::LazyViewDecoder*>(state_->decoder.get());
}

Stream Stream::failed(Error error) {
    Stream s(nullptr, nullptr);
    s.state_->end_with(std::move(error));
    return s;
}

Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;

Stream::~Stream() {
    // Unfinished: cancel now. After [DONE] the source's own destructor first
    // gives the reader a moment to reach the body's end (so the connection can
    // be pooled), then cancels. Either way it joins its reader promptly.
    if (state_ && state_->source && !state_->finished) state_->source->cancel();
}

std::optional<StreamItemView> Stream::next_view() {
    State& s = *state_;
    // One result object for every return, so that it is built in the caller's
    // slot (NRVO): a local item copied out was a store-forwarding stall per
    // event, the largest single cost of a small event.
    std::optional<StreamItemView> result;
    if (s.cancelled.load() && !s.cancel_reported) s.report_cancel();
    for (;;) {
        // A piece's events in order: the views begin() decoded, then the
        // plain events one by one, then the views of the rest.
        if (s.lazy && s.view_pos == s.views.size()) {
            StreamItemView& item = result.emplace();
            const auto next = s.lazy_decoder->next_plain(item.event);
            if (next == detail::LazyViewDecoder::Next::event) {
                s.delivered(item.event);
                return result;
            }
            result.reset();
            if (next == detail::LazyViewDecoder::Next::other)
                s.decode_rest();  // anything else in the piece: into views
            else
                s.lazy = false;  // the piece is used up
        }
        if (s.view_pos < s.views.size()) {
            StreamItemView& item = result.emplace();
            item.event = s.views[s.view_pos++];
            s.delivered(item.event);
            return result;
        }
        if (s.terminal != State::Terminal::none) {
            StreamItemView& item = result.emplace();
            if (s.terminal == State::Terminal::done) {
                item.kind = StreamItem::Kind::done;
            } else {
                item.kind = StreamItem::Kind::error;
                item.error = &*s.terminal_error;
            }
            s.terminal = State::Terminal::none;  // delivered once
            s.finished = true;
            return result;
        }
        if (s.finished || !s.source) return result;
        // The views of the previous piece are void from here: its storage goes back.
        if (s.current_owned) {
            s.current_owned = false;
            s.source->recycle(std::move(s.current->bytes));
        }
        if (s.watch) s.watch->waiting();
        if (std::string_view data; s.view_source && s.view_source->next_data_view(data)) {
            s.decode(data);
            continue;
        }
        s.next_piece();
    }
}

std::optional<StreamItem> Stream::next() {
    // The owning API builds on the views: one copy of each event.
    auto view = next_view();
    if (!view) return std::nullopt;
    StreamItem item;
    item.kind = view->kind;
    if (view->is_event()) {
        item.event = view->event.to_event();
    } else if (view->is_error()) {
        item.error.emplace(*view->error);
    }
    return item;
}

void Stream::cancel() noexcept {
    if (state_) state_->interrupt();  // what a shared token's cancel does too
}

StreamStats Stream::stats() const {
    StreamStats s = state_->source ? state_->source->stats() : StreamStats{};
    s.items = state_->items.load();
    s.done_seen = state_->done_seen.load();
    return s;
}

Headers Stream::response_headers() const {
    return state_->source ? state_->source->response_headers() : Headers{};
}

std::string Stream::request_id() const { return request_id_of(response_headers()); }

namespace detail {

std::unique_ptr<Decoder> decoder_for(const Options& options, std::size_t cap) {
    if (options.decoder) return options.decoder();
    switch (options.stream_format) {
        case StreamFormat::sse:
            return make_sse_decoder(cap);
        case StreamFormat::ndjson:
            return make_ndjson_decoder(cap);
        case StreamFormat::json_array:
            return make_json_array_decoder(cap);
        case StreamFormat::raw:
            return make_raw_decoder(cap);
        case StreamFormat::aws_event_stream:
            return make_aws_event_stream_decoder(cap);
    }
    return make_sse_decoder(cap);
}

}  // namespace detail

std::unique_ptr<Decoder> decoder_for(const Options& options) {
    // max_event_bytes has no Config field: the options over the default.
    return detail::decoder_for(options,
                               detail::effective_settings(options, Config{}).max_event_bytes);
}

namespace detail {

struct StreamAccess {
    static Stream watch(Stream stream, const Options& options, const Config& config,
                        Clock::time_point start) {
        Stream::State* s = stream.state_.get();
        if (!s || !s->source) return stream;  // failed already: nothing to watch
        const Settings settings = effective_settings(options, config);
        if (settings.first_event_timeout || settings.event_idle_timeout) {
            s->is_content_event = options.is_content_event;
            s->content_watch.emplace(s, start, settings.first_event_timeout,
                                     settings.event_idle_timeout);
            s->watch = &*s->content_watch;
        }
        if (options.cancel) s->shared_cancel.emplace(options.cancel, s);
        return stream;
    }
};

Stream watch_call(Stream stream, const Options& options, const Config& config,
                  Clock::time_point start) {
    return StreamAccess::watch(std::move(stream), options, config, start);
}

}  // namespace detail

}  // namespace nous::http
