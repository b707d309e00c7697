// The window source's read relay (stream/window_source.hpp): a consumer
// waiting with the queue empty reads the socket itself, holding the reading
// role; the reader reads only while the consumer is away, and while asleep
// keeps the deadline of a consumer that waits without a timer of its own.

#include "core/limits.hpp"
#include "stream/window_source.hpp"

namespace nous::http::detail {

/// The consumer's side of the relay, when the queue is empty: holding the
/// reading role, it waits on the socket and reads the piece itself.
WindowSource::Relayed WindowSource::read_relayed(std::string_view& out) {
    const Relayed relayed = read_relayed_holding_role(out);
    // Told only now: signalled under the role, the reader woke to wait for it.
    if (reader_end_due_) tell_reader_end();
    return relayed;
}

WindowSource::Relayed WindowSource::read_relayed_holding_role(std::string_view& out) {
    std::unique_lock role(role_);
    // The reader queues only with the role: a piece queued before we took
    // it is the next one.
    if (produced_.load(std::memory_order_acquire) > consumed_) return Relayed::queued;
    bool socket_ready = false;  // this wait saw the socket readable
    for (;;) {
        // A piece the reader queued while we waited (its last: the error a
        // stop while parked ends it with) comes before the body's end.
        if (produced_.load(std::memory_order_acquire) > consumed_) return Relayed::queued;
        if (body_over_) return stash(Piece{});  // this side read the end already: end again
        if (stop_.load())
            return stash(end_body(error_piece(Error(ErrorCode::cancelled, "stream cancelled"))));
        if (!socket_ready && !request_.input_pending()) {
            // The role is held while waiting: the reader, woken only when
            // this wait is not, cannot read (so cannot queue) under it.
            const Clock::time_point limit = consumer_limit();
            const Clock::time_point now = Clock::now();  // once for both below
            const Expiry expiry = relay_deadlines_.expired(limit, now);
            if (expiry != Expiry::not_yet) {
                // Bytes that arrived as the deadline passed are read, not refused.
                if (request_.readable_now()) {
                    socket_ready = true;
                    continue;
                }
                return stash(end_body(error_piece(body_wait_error(expiry))));
            }
            int wait_ms = relay_wait_ms(limit, now);
            // The reader asleep in its wait keeps this deadline for us
            // (keep_deadline_while_asleep): then no timer of our own, which
            // armed and cancelled a high-resolution timer at every token.
            // Announce, then look: the reader stops keeping only after
            // it has looked at our flag (seq_cst both sides).
            consumer_unbounded_.store(true, std::memory_order_seq_cst);
            if (reader_keeps_deadline_.load(std::memory_order_seq_cst))
                wait_ms = -1;
            else
                consumer_unbounded_.store(false, std::memory_order_relaxed);
            socket_ready = relay_.wait_consumer(wait_ms) == ReadRelay::Woken::socket;
            consumer_unbounded_.store(false, std::memory_order_relaxed);
            continue;
        }
        std::string_view view;
        switch (request_.read_view(view)) {
            case ResponseReader::Piece::data: {
                ++consumer_reads_;
                // The view is the reader's buffer, which it may read into
                // once the role is given back: the piece is a copy.
                consumer_bytes_.assign(view);
                std::size_t taken = view.size();
                take_buffered(taken);
                count_read(taken);
                // Bytes left behind (in TLS, or in a socket whose read
                // filled the buffer) wake no wait: the reader is told, so
                // that it reads on while we are away.
                if (!body_over_ && request_.input_pending()) relay_.signal();
                out = consumer_bytes_;
                return Relayed::data;
            }
            case ResponseReader::Piece::end:
                return stash(end_body(Piece{}, AfterBody::give_back));
            case ResponseReader::Piece::error:
                return stash(end_body(
                    error_piece(stop_.load() ? Error(ErrorCode::cancelled, "stream cancelled")
                                             : request_.read_failure())));
        }
    }
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
/// role for each read.
void WindowSource::produce_relayed(bool bytes_buffered) {
    std::unique_lock role(role_, std::defer_lock);
    bool socket_ready = false;
    // With nothing buffered the reader waits first: taking the role
    // first waited for it while a consumer that came for its first piece
    // held it in its own wait, and woke the reader at that piece's read.
    if (!bytes_buffered) socket_ready = keep_deadline_while_asleep();
    role.lock();
    // The consumer's reads before this point are counted too: bytes
    // that woke the wait above may be read already (peeked below).
    std::uint64_t consumer_reads_seen = 0;
    for (;;) {
        if (body_over_) return;  // the consumer read the end, or finished after [DONE]
        if (stop_.load()) {
            body_over_ = true;
            push(error_piece(Error(ErrorCode::cancelled, "stream cancelled")));
            return;
        }
        // Woken for bytes the consumer may have read since: look before a
        // blocking read, which would hold the role until more arrive.
        const bool ready =
            request_.input_pending() ||
            (socket_ready && (consumer_reads_ == consumer_reads_seen || request_.readable_now()));
        if (!ready) {
            consumer_reads_seen = consumer_reads_;
            role.unlock();
            socket_ready = keep_deadline_while_asleep();
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

/// The reader's wait for bytes, without the role. Asleep here it keeps
/// the deadline of a consumer waiting in the relay, which then waits
/// without a timer of its own: one timer a sleep of the reader's (which
/// sleeps as long as the consumer keeps up) instead of one a token. At the
/// deadline it wakes the consumer, which finds it passed and says so.
/// It leaves only once no consumer waits unbounded: a consumer that
/// looked at the flag before it was cleared is seen here. True when the
/// socket woke it.
bool WindowSource::keep_deadline_while_asleep() {
    bool socket_ready = false;
    for (;;) {
        const Clock::time_point now = Clock::now();
        // Past the deadline there is nothing to keep (a consumer about to
        // wait finds it passed itself): no timeout, and no "keeping".
        const Clock::time_point limit = consumer_limit();
        const bool keeping = now < limit;
        reader_keeps_deadline_.store(keeping, std::memory_order_seq_cst);
        const int wait_ms = keeping ? relay_wait_ms(limit, now) : -1;
        const ReadRelay::Woken woken = relay_.wait_reader(wait_ms);
        reader_keeps_deadline_.store(false, std::memory_order_seq_cst);
        if (woken == ReadRelay::Woken::socket) socket_ready = true;
        if (!consumer_unbounded_.load(std::memory_order_seq_cst)) return socket_ready;
        // A consumer waits without a timer, counting on us: at the
        // deadline (whatever woke us) its wait ends, and it reports it.
        if (relay_deadlines_.expired(consumer_limit()) != Expiry::not_yet) relay_.signal();
        if (stop_.load()) return socket_ready;
    }
}

/// The deadline of the consumer's wait in the relay: the idle gap from
/// the last bytes read, or the total deadline. Read on either thread.
Clock::time_point WindowSource::consumer_limit() const noexcept {
    return relay_deadlines_.read_limit(last_read_.load());
}

/// A relay wait's timeout until `limit`: one millisecond over (epoll
/// rounds down, and a wait of 0 would spin).
int WindowSource::relay_wait_ms(Clock::time_point limit, Clock::time_point now) noexcept {
    return std::min(millis_until(limit, now), INT_MAX - 1) + 1;
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
