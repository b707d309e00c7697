// The window source's read relay (stream/window_source.hpp): a consumer
// waiting with the queue empty reads the socket itself, holding the reading
// role; the reader reads only while the consumer is away, woken by the
// process's read watch.

#include "core/limits.hpp"
#include "stream/window_source.hpp"

namespace nous::http::detail {

/// The consumer's side of the relay, when the queue is empty: holding the
/// reading role, it reads the socket itself, in a blocking read.
WindowSource::Relayed WindowSource::read_relayed(std::string_view& out) {
    Relayed relayed;
    relay_.consumer_back();
    {
        std::lock_guard role(role_);
        relayed = read_relayed_holding_role(out);
        // Away from here on: if for long, the reader is woken to read ahead.
        if (!body_over_) relay_.consumer_away();
    }
    // Told only now: signalled under the role, the reader woke to wait for it.
    if (reader_end_due_) tell_reader_end();
    return relayed;
}

WindowSource::Relayed WindowSource::read_relayed_holding_role(std::string_view& out) {
    // The reader queues only with the role: a piece queued before we took
    // it (its last too: the error a stop while parked ends it with) is the
    // next one, before the body's end.
    if (produced_.load(std::memory_order_acquire) > consumed_) return Relayed::queued;
    if (body_over_) return stash(Piece{});  // this side read the end already: end again
    if (stop_.load())
        return stash(end_body(error_piece(Error(ErrorCode::cancelled, "stream cancelled"))));
    if (!request_.input_pending()) {
        // The idle deadline counts from the last bytes read: a consumer
        // coming back to a gap already past it hears so at once (bytes
        // that arrived as it passed are read, not refused). Otherwise the
        // read below waits at most the idle timeout, as every read does.
        const Deadlines& deadlines = request_.deadlines();
        const Expiry expiry = deadlines.expired(deadlines.read_limit(last_read_.load()));
        if (expiry != Expiry::not_yet && !request_.readable_now())
            return stash(end_body(error_piece(body_wait_error(expiry))));
    }
    // Disarmed, the socket's bytes wake this read alone; the reader, asleep
    // until the watch wakes it, cannot read (so cannot queue) while we hold
    // the role.
    relay_.disarm();
    std::string_view view;
    switch (request_.read_view(view)) {
        case ResponseReader::Piece::data: {
            // The view is the reader's buffer, which it may read into
            // once the role is given back: the piece is a copy.
            consumer_bytes_.assign(view);
            std::size_t taken = view.size();
            take_buffered(taken);
            count_read(taken);
            // Bytes left behind (in TLS, or in a socket whose read
            // filled the buffer) wake no watch: the reader is told, so
            // that it reads on while we are away.
            if (!body_over_ && request_.input_pending()) relay_.signal();
            out = consumer_bytes_;
            return Relayed::data;
        }
        case ResponseReader::Piece::end:
            return stash(end_body(Piece{}, AfterBody::give_back));
        case ResponseReader::Piece::error:
            return stash(
                end_body(error_piece(stop_.load() ? Error(ErrorCode::cancelled, "stream cancelled")
                                                  : request_.read_failure())));
    }
    return stash(end_body(error_piece(Error(ErrorCode::protocol, "unknown read result"))));
}

/// A piece next() returns next (consumer thread only).
/// Once a stream at most, but for repeated calls after the end: out of
/// the object's hot lines.
WindowSource::Relayed WindowSource::stash(Piece piece) {
    stashed_ = std::make_unique<Piece>(std::move(piece));
    return Relayed::stashed;
}

/// The stashed piece; the end when there is none (after a failure was delivered).
Piece WindowSource::take_stashed() {
    if (!stashed_) return Piece{};
    Piece piece = std::move(*stashed_);
    stashed_.reset();
    return piece;
}

/// After the consumer's read, the rest of what the read buffer holds goes
/// into the same piece: bytes left there wake no wait, and handing them
/// to the reader cost a signal and a hand-off of the role per event when
/// the server sends faster than an event a read (a 3x cost per token,
/// unpaced). The body's end or failure behind them is taken too: the end
/// gives the connection back now (the piece is a copy), a failure is the
/// next piece. Under the role.
void WindowSource::take_buffered(std::size_t& taken) {
    for (;;) {
        ResponseReader::Piece kind;
        std::string_view more;
        if (!request_.read_buffered_view(kind, more)) return;
        switch (kind) {
            case ResponseReader::Piece::data:
                consumer_bytes_.append(more);
                taken += more.size();
                continue;
            case ResponseReader::Piece::end:
                end_body(Piece{}, AfterBody::give_back);  // the next call: end
                return;
            case ResponseReader::Piece::error:
                stash(end_body(error_piece(request_.read_failure())));
                return;
        }
    }
}

/// The consumer read the body's end or failure, or gave up waiting: the
/// reader ends without queueing anything. Under the role.
Piece WindowSource::end_body(Piece piece, AfterBody after) {
    end_body_locked(after);
    reader_end_due_ = true;  // read_relayed() tells the reader once it gives the role back
    return piece;
}

/// The consumer ended the body: the reader, asleep in its wait, ends.
/// Once: a cancel after it (the handle's destructor) signals no more.
void WindowSource::tell_reader_end() noexcept {
    reader_end_due_ = false;
    relay_.signal();
    reader_told_end_.store(true);
}

/// Under the role (or before the relay): nothing reads the response again.
/// The socket leaves the relay's waits first: a connection given back may
/// be waited on by another stream next.
void WindowSource::end_body_locked(AfterBody after) noexcept {
    body_over_ = true;
    relay_.forget_socket();
    if (after == AfterBody::give_back) request_.release();
    request_.close();
}

/// Bytes read, by either thread (they take turns under the role, or the
/// reader alone): counted with plain stores, no locked add per piece, and
/// the idle deadline restarts.
void WindowSource::count_read(std::size_t n) noexcept {
    last_read_.store(Clock::now());
    bytes_.store(bytes_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

/// The reader's side of the relay: it reads while the consumer is not
/// waiting for bytes, exactly as the plain loop, and takes the reading
/// role for each read. `seen`: the relay's word, read before the socket
/// was armed (when nothing was buffered).
void WindowSource::produce_relayed(bool bytes_buffered, std::uint32_t seen) {
    std::unique_lock role(role_, std::defer_lock);
    // With nothing buffered the reader waits first: taking the role
    // first waited for it while a consumer that came for its first piece
    // held it in its own read, and woke the reader at that read's end.
    bool socket_ready = bytes_buffered ? false : relay_.wait_reader(seen);
    role.lock();
    for (;;) {
        if (body_over_) return;  // the consumer read the end, or finished after [DONE]
        if (stop_.load()) {
            body_over_ = true;
            push(error_piece(Error(ErrorCode::cancelled, "stream cancelled")));
            return;
        }
        // Woken for bytes the consumer may have read since: look before a
        // blocking read, which would hold the role until more arrive.
        if (!request_.input_pending() && !(socket_ready && request_.readable_now())) {
            // The word first, then armed: bytes that arrive after the arm
            // change the word, and the wait returns at once.
            seen = relay_.reader_word();
            relay_.arm_for_reader();
            role.unlock();
            socket_ready = relay_.wait_reader(seen);
            role.lock();
            continue;
        }
        socket_ready = false;
        switch (read_into_window()) {
            case Step::more:
                break;
            case Step::full:
                // Parked without the role: the consumer drains the queue meanwhile.
                role.unlock();
                if (!park()) return;
                role.lock();
                break;
            case Step::over:
                return;
        }
    }
}

void WindowSource::finish_after_done() noexcept {
    after_done_.store(true);
    if (!relay_on_.load(std::memory_order_acquire)) return;
    // On the consumer's thread, right after [DONE]: the reader may be
    // waiting for bytes the consumer would have read, so the rest of the
    // body is read here, as the pull backend does, and the connection kept.
    {
        std::lock_guard role(role_);
        if (body_over_) return;  // whoever ended it told the reader, or was the reader
        relay_.forget_socket();  // before the connection can go back to the pool
        request_.drain_and_release(limits::drain_after_done);
        end_body_locked();
    }
    tell_reader_end();
}

}  // namespace nous::http::detail
