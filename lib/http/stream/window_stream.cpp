// The `window` stream backend (stream/window_source.hpp): the consumer's
// side, and the reader's loop that reads into the window and parks on it.

#include <thread>

#include "core/limits.hpp"
#include "stream/window_source.hpp"

namespace nous::http::detail {

WindowSource::WindowSource(std::unique_ptr<StreamCall> call, StreamSlot slot)
    : call_(std::move(call)), slot_(std::move(slot)), request_(*call_, token_, buffer_) {
    reader_.start([this] { run(); });
}

WindowSource::~WindowSource() {
    // With the relay, finish_after_done() read the body's rest itself.
    if (after_done_.load() && !relay_on_.load()) {
        // [DONE] was delivered: give the reader a moment to see the body's
        // end (usually already in the socket) so the connection is pooled.
        std::unique_lock lock(mutex_);
        reader_done_cv_.wait_for(lock, limits::drain_after_done, [&] { return reader_finished_; });
    }
    cancel();
    reader_.join();
}

Piece WindowSource::next() {
    Piece piece;
    if (next_data_view(piece.view)) {
        piece.kind = Piece::Kind::data;
        return piece;
    }
    return take_stashed();
}

bool WindowSource::next_data_view(std::string_view& out) {
    // The previous piece's views are void from here: its storage goes back.
    if (holds_queued_) {
        holds_queued_ = false;
        spare_.give(std::move(queued_bytes_));
    }
    for (;;) {
        if (stashed_) return false;  // next() returns it
        if (overflowed_.load(std::memory_order_acquire)) {
            // Delivered at once, ahead of the queued data: the request was aborted.
            overflowed_.store(false);
            std::lock_guard lock(mutex_);
            stash(error_piece(*overflow_error_));
            return false;
        }
        // Our own counter first: with the queue empty (the relay's usual
        // case) the queue's lines are not touched at all.
        Slot slot;
        if (produced_.load(std::memory_order_acquire) > consumed_ &&
            queue_.try_dequeue(consumer_token_, slot)) {
            ++consumed_;
            if (slot.kind != Piece::Kind::data) {
                stash(std::move(slot).into_piece());
                return false;
            }
            const std::size_t n = slot.bytes.size();
            const std::size_t before = inflight_.fetch_sub(n, std::memory_order_acq_rel);
            // Wake the reader exactly when the total comes down to the low mark.
            if (before > call_->prepared.settings.window_low_bytes &&
                before - n <= call_->prepared.settings.window_low_bytes) {
                // The window reopens: the next bytes' idle deadline counts from here.
                last_read_.store(Clock::now());
                std::lock_guard lock(mutex_);
                if (reader_parked_) reader_cv_.notify_one();
            }
            queued_bytes_ = std::move(slot.bytes);
            holds_queued_ = true;
            out = queued_bytes_;
            return true;
        }
        // try_dequeue can fail transiently right after an enqueue
        // (docs/design/poco-traps.md#queue-spurious-empty): our own counter says whether to
        // retry.
        const std::uint32_t seen = pushed_.current();
        if (produced_.load(std::memory_order_acquire) > consumed_ || overflowed_.load()) {
            std::this_thread::yield();
            continue;
        }
        if (relay_on_.load(std::memory_order_acquire)) {
            switch (read_relayed(out)) {
                case Relayed::data:
                    return true;
                case Relayed::stashed:
                    return false;
                case Relayed::queued:
                    continue;  // the reader queued a piece meanwhile
            }
        }
        // Announce, then look again: a push after `seen` was read either
        // changed the word (the futex returns at once) or saw the flag and wakes us.
        // After a cancel too the reader's last piece (its error) is what
        // ends the wait: no spinning while it gets there. No timer: every
        // cause to wake (a piece, a cancel, an overflow, the relay's start)
        // bumps the word through wake_consumer(). A 100 ms slice here woke
        // every waiting consumer ten times a second, 5-10 wake-ups a token
        // for nothing at the 1-2 tokens a second of a real model, each dearer
        // the more threads the process holds (docs/BENCHMARKS.md, "Scale").
        consumer_waiting_.store(true, std::memory_order_seq_cst);
        if (pushed_.current() == seen) pushed_.wait_unbounded(seen);
        consumer_waiting_.store(false, std::memory_order_relaxed);
    }
}

void WindowSource::cancel() noexcept {
    stop_.store(true);
    token_.cancel();  // shuts down the socket: wakes a blocked connect or read
    wake_consumer();
    // Once the body is over the reader has been told (it ends by itself):
    // a signal more would only wake it to find the role taken.
    if (relay_on_.load() && !reader_told_end_.load()) relay_.signal();
    std::lock_guard lock(mutex_);
    reader_cv_.notify_all();
}

StreamStats WindowSource::stats() const {
    StreamStats s;
    s.bytes = bytes_.load();
    s.parks = parks_.load();
    s.parked = std::chrono::microseconds(parked_us_.load());
    s.peak_inflight_bytes = peak_.load();
    s.status = status_.load();
    return s;
}

void WindowSource::run() {
    // SIGPIPE is blocked on every reader thread (reader_thread.cpp): POCO
    // and OpenSSL write without MSG_NOSIGNAL (docs/design/poco-traps.md#sigpipe).
    try {
        produce();
    } catch (const std::exception& e) {
        reader_failed(e);
    }
    {
        // The response is over for the reader: a connection not given
        // back goes now (the server sees an aborted request at once).
        std::lock_guard role(role_);
        end_body_locked();
    }
    std::lock_guard lock(mutex_);
    reader_finished_ = true;
    reader_done_cv_.notify_all();
}

/// The reader's body threw: the consumer hears it as the stream's last
/// piece. Out of run()'s frame, which is under the connect and every read.
[[gnu::noinline, gnu::cold]] void WindowSource::reader_failed(const std::exception& e) {
    push(error_piece(Error(ErrorCode::protocol, std::string("stream reader failed: ") + e.what())));
}

void WindowSource::produce() {
    if (!open_request()) return;
    // The connect and the head went deepest; the rest of the stream runs
    // in the frames above, for as long as the stream lasts.
    release_reader_stack_below_caller();
    produce_opened();
}

/// The request opened on the reader's thread; false (its error queued)
/// when it failed. The failure's piece is built in a frame of its own.
bool WindowSource::open_request() {
    std::optional<Error> failed = request_.open();
    if (!failed) return true;
    push_failure(std::move(*failed));
    return false;
}

[[gnu::noinline]] void WindowSource::push_failure(Error e) { push(error_piece(std::move(e))); }

/// After the head: the relay set up, or the plain loop, until the body's end.
/// A frame of its own, off the stack while the connect runs (a stream's
/// thread keeps every page it touched).
[[gnu::noinline]] void WindowSource::produce_opened() {
    headers_.set(request_.take_headers());
    status_.store(request_.status());
    if (call_->window_relay && relay_.open(request_.wait_fd())) {
        last_read_.store(Clock::now());
        // Bytes already there (a server often sends the first event
        // right behind the head) are read into the window before the
        // relay starts: armed with them in the socket, the watch woke the
        // reader at once, and it took the role from the consumer only to
        // find them read.
        if (request_.readable_now() && read_first_into_window() != Step::more) return;
        const bool bytes_buffered = request_.input_pending();  // still only the reader reads
        // The word first, then armed (still the reader's alone: no role
        // needed yet), then the consumer may read.
        const std::uint32_t seen = relay_.reader_word();
        if (!bytes_buffered) relay_.arm_for_reader();
        relay_on_.store(true, std::memory_order_release);
        wake_consumer();  // a consumer waiting for the first piece reads itself from here
        produce_relayed(bytes_buffered, seen);
        return;
    }
    for (;;) {
        if (stop_.load()) {
            push(error_piece(Error(ErrorCode::cancelled, "stream cancelled")));
            return;
        }
        switch (read_into_window()) {
            case Step::more:
                break;
            case Step::full:
                if (!park()) return;
                break;
            case Step::over:
                return;
        }
    }
}

/// Before the relay starts (no role yet: only the reader reads): one
/// read into the window, parked on when it filled it. `more` when the
/// stream goes on.
WindowSource::Step WindowSource::read_first_into_window() {
    const Step step = read_into_window();
    if (step == Step::full) return park() ? Step::more : Step::over;
    return step;
}

/// One read of the response into the window, queued and accounted: more
/// to read, the window full (park), or the body over (its end or error
/// queued). The reader's, under the role once the relay is on.
WindowSource::Step WindowSource::read_into_window() {
    Piece piece;
    spare_.take(piece.bytes);  // storage the consumer gave back, if any
    piece.bytes.clear();
    std::optional<Error> error;
    switch (request_.read(piece.bytes, error)) {
        case ResponseReader::Piece::data: {
            const std::size_t n = piece.bytes.size();
            count_read(n);
            piece.kind = Piece::Kind::data;
            // Account before enqueueing, so the consumer never subtracts first.
            const std::size_t now = inflight_.fetch_add(n, std::memory_order_acq_rel) + n;
            note_peak(now);
            push(std::move(piece));
            return now > call_->prepared.settings.window_high_bytes ? Step::full : Step::more;
        }
        case ResponseReader::Piece::end:
            end_body_locked(AfterBody::give_back);
            push(Piece{Piece::Kind::end, {}, {}, {}});
            return Step::over;
        case ResponseReader::Piece::error:
            body_over_ = true;
            push(error_piece(stop_.load() ? Error(ErrorCode::cancelled, "stream cancelled")
                                          : std::move(*error)));
            return Step::over;
    }
    return Step::over;
}

/// Parks until the consumer drains under the low mark. False when the
/// stream must end (cancelled, or parked past the maximum wait), its
/// last piece queued or its overflow flagged: the caller only returns.
bool WindowSource::park() {
    std::unique_lock lock(mutex_);
    const auto start = Clock::now();
    // The maximum park counts from the moment the reader parks.
    const auto deadline = saturating_add(start, call_->prepared.settings.window_max_park);
    reader_parked_ = true;
    parks_.fetch_add(1, std::memory_order_relaxed);
    bool resumed = true, overflowed = false;
    // Until the consumer brings the bytes in flight down to the low mark
    // (at it counts: a low mark of 0 means "until drained", never a hang).
    while (inflight_.load(std::memory_order_acquire) > call_->prepared.settings.window_low_bytes) {
        if (stop_.load()) {
            resumed = false;
            break;
        }
        auto now = Clock::now();
        if (now >= deadline) {
            overflow_error_ =
                Error(ErrorCode::backpressure_overflow,
                      "consumer too slow: reader parked for " +
                          std::to_string(call_->prepared.settings.window_max_park.count()) +
                          " ms with " + std::to_string(inflight_.load()) + " bytes in flight");
            overflow_error_->inflight_bytes = inflight_.load();
            overflowed_.store(true, std::memory_order_release);
            wake_consumer();
            resumed = false;
            overflowed = true;
            break;
        }
        // Until the maximum park, no slice: every cause to resume (the
        // consumer down at the low mark, a cancel) notifies under this
        // mutex, and the look at inflight_ above is under it too. A 100 ms
        // slice woke every parked reader ten times a second for nothing:
        // a CPU's worth at 10,000 parked streams (docs/BENCHMARKS.md, "The
        // slow consumer").
        reader_cv_.wait_until(lock, deadline);
    }
    reader_parked_ = false;
    if (!resumed && !overflowed) {
        // Stopped while parked (a cancel, a content deadline, the handle
        // dropped): the consumer hears it as the stream's last piece, never
        // as a clean end of a body that did not end. An overflow is told
        // through overflowed_ instead, ahead of the queued data.
        lock.unlock();
        push(error_piece(Error(ErrorCode::cancelled, "stream cancelled")));
        lock.lock();
    }
    parked_us_.fetch_add(
        static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()),
        std::memory_order_relaxed);
    return resumed;
}

void WindowSource::push(Piece piece) {
    queue_.enqueue(producer_token_, Slot::of(std::move(piece)));
    produced_.store(produced_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    wake_consumer();
}

/// After anything the consumer waits for (a piece, a cancel, an overflow).
void WindowSource::wake_consumer() noexcept {
    pushed_.bump();
    if (consumer_waiting_.load(std::memory_order_seq_cst)) pushed_.wake();
}

Piece WindowSource::error_piece(Error e) {
    Piece p;
    p.kind = Piece::Kind::error;
    p.error = std::move(e);
    return p;
}

void WindowSource::note_peak(std::size_t now) {
    std::size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
}

std::unique_ptr<ChunkSource> make_window_source(std::unique_ptr<StreamCall> call, StreamSlot slot) {
    return std::make_unique<WindowSource>(std::move(call), std::move(slot));
}

}  // namespace nous::http::detail
