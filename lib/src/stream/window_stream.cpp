// The `window` stream backend: a reader thread per stream feeds body chunks
// into a moodycamel queue, with byte accounting beside it that parks the
// reader above the high mark until the consumer drains under the low mark.
// A parked reader does not read the socket, so TCP backpressure reaches the server.
// A consumer waiting in next() with the queue empty reads the socket itself
// (the read relay, transport/read_relay.hpp): the reader reads only while the
// consumer is away.

#include <concurrentqueue/concurrentqueue.h>

#include <climits>
#include <condition_variable>
#include <memory>
#include <thread>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "stream/reader_thread.hpp"
#include "stream/stream_backends.hpp"
#include "stream/stream_request.hpp"
#include "stream/wake_word.hpp"
#include "transport/read_relay.hpp"

namespace nous::http::detail {

namespace {

using Piece = ChunkSource::Piece;

/// The queue's shape: at token rates it holds one piece at a time, so
/// small blocks (a fast reader ahead of a slow consumer takes more of them,
/// kept until the stream ends: docs/design/poco-traps.md#queue-memory), and
/// no implicit producers (the reader enqueues through its token): moodycamel's
/// defaults (32-slot blocks, a 32-entry producer hash in the queue, 32-entry
/// block indexes) were ~4 KB resident a stream for one piece in flight.
struct WindowQueueTraits : moodycamel::ConcurrentQueueDefaultTraits {
    static const std::size_t BLOCK_SIZE = 8;
    static const std::size_t EXPLICIT_INITIAL_INDEX_SIZE = 8;
    static const std::size_t INITIAL_IMPLICIT_PRODUCER_HASH_SIZE = 0;
};

/// What the queue holds: a Piece with its (rare, once per stream at most)
/// error out of line. A Piece carries an optional Error inline, ~220 bytes a
/// slot; the queue's first block is touched, and so resident, for the
/// stream's whole life: a block of 8 is 384 bytes of Slots.
struct Slot {
    Piece::Kind kind = Piece::Kind::end;
    std::string bytes;
    std::unique_ptr<Error> error;

    static Slot of(Piece&& piece) {
        Slot s;
        s.kind = piece.kind;
        s.bytes = std::move(piece.bytes);
        if (piece.error) s.error = std::make_unique<Error>(std::move(*piece.error));
        return s;
    }
    Piece into_piece() && {
        Piece p;
        p.kind = kind;
        p.bytes = std::move(bytes);
        if (error) p.error = std::move(*error);
        return p;
    }
};

/// Bounded waits: a missed wake-up costs one period, never a hang.
constexpr auto kWaitSlice = std::chrono::milliseconds(100);

/// Piece storage the consumer gives back for the reader to read into next:
/// one writer (the consumer, in recycle()) and one reader (the reader
/// thread), a ring of a few strings with two counters. A full ring drops the
/// storage; an empty one makes the reader allocate.
class SpareRing {
  public:
    /// Consumer side.
    void give(std::string&& bytes) noexcept {
        const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
        if (tail - head_.load(std::memory_order_acquire) == kSlots) return;  // full
        slots_[tail % kSlots] = std::move(bytes);
        tail_.store(tail + 1, std::memory_order_release);
    }
    /// Reader side: storage into `out` when there is some.
    void take(std::string& out) noexcept {
        const std::uint32_t head = head_.load(std::memory_order_relaxed);
        if (head == tail_.load(std::memory_order_acquire)) return;  // empty
        out = std::move(slots_[head % kSlots]);
        head_.store(head + 1, std::memory_order_release);
    }

  private:
    // A few spare buffers cover the pieces in flight between the two
    // threads; more would only hold memory.
    static constexpr std::uint32_t kSlots = 4;
    std::string slots_[kSlots];
    std::atomic<std::uint32_t> head_{0}, tail_{0};
};

class WindowSource final : public ChunkSource, public ViewSource {
  public:
    WindowSource(std::unique_ptr<StreamCall> call, StreamSlot slot)
        : call_(std::move(call)), slot_(std::move(slot)), request_(*call_, token_, buffer_) {
        reader_.start([this] { run(); });
    }

    ~WindowSource() override {
        // With the relay, finish_after_done() read the body's rest itself.
        if (after_done_.load() && !relay_on_.load()) {
            // [DONE] was delivered: give the reader a moment to see the body's
            // end (usually already in the socket) so the connection is pooled.
            std::unique_lock lock(mutex_);
            reader_done_cv_.wait_for(lock, limits::drain_after_done,
                                     [&] { return reader_finished_; });
        }
        cancel();
        reader_.join();
    }

    Piece next() override {
        Piece piece;
        if (next_data_view(piece.view)) {
            piece.kind = Piece::Kind::data;
            return piece;
        }
        return take_stashed();
    }

    bool next_data_view(std::string_view& out) override {
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
            // ends the wait: no spinning while it gets there.
            consumer_waiting_.store(true, std::memory_order_seq_cst);
            if (pushed_.current() == seen) pushed_.wait(seen, kWaitSlice);
            consumer_waiting_.store(false, std::memory_order_relaxed);
        }
    }

    void cancel() noexcept override {
        stop_.store(true);
        token_.cancel();  // shuts down the socket: wakes a blocked connect or read
        wake_consumer();
        // Once the body is over the reader has been told (it ends by itself):
        // a signal more would only wake it to find the role taken.
        if (relay_on_.load() && !reader_told_end_.load()) relay_.signal();
        std::lock_guard lock(mutex_);
        reader_cv_.notify_all();
    }

    void finish_after_done() noexcept override {
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

    void recycle(std::string&& bytes) noexcept override { spare_.give(std::move(bytes)); }

    Headers response_headers() const override { return headers_.get(); }

    StreamStats stats() const override {
        StreamStats s;
        s.bytes = bytes_.load();
        s.parks = parks_.load();
        s.parked = std::chrono::microseconds(parked_us_.load());
        s.peak_inflight_bytes = peak_.load();
        s.status = status_.load();
        return s;
    }

  private:
    /// What becomes of the connection when the body is over: given back
    /// (read to its end: to the pool when it may serve another request), or closed.
    enum class AfterBody { give_back, close };

    void run() {
        // SIGPIPE is blocked on every reader thread (reader_thread.cpp): POCO
        // and OpenSSL write without MSG_NOSIGNAL (docs/design/poco-traps.md#sigpipe).
        try {
            produce();
        } catch (const std::exception& e) {
            Piece p;
            p.kind = Piece::Kind::error;
            p.error = Error(ErrorCode::protocol, std::string("stream reader failed: ") + e.what());
            push(std::move(p));
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

    void produce() {
        if (auto e = request_.open()) {
            push(error_piece(std::move(*e)));
            return;
        }
        headers_.set(request_.headers());
        status_.store(request_.status());
        // The relay leaves a descriptor free for each stream the cap allows
        // (and a few more): without it, 1000 streams fit a limit of 1024.
        const std::size_t reserve = call_->prepared.settings.max_concurrent_streams + 64;
        if (relay_.open(request_.wait_fd(), reserve)) {
            // A copy: the reader keeps the consumer's deadline without the
            // role, when the request may be closed under it.
            relay_deadlines_ = request_.deadlines();
            last_read_.store(Clock::now());
            // Bytes already there (a server often sends the first event
            // right behind the head) are read into the window before the
            // relay starts: left in the socket, they woke both waits at once
            // (level-triggered), and the reader then took the role from the
            // consumer only to find them read.
            if (request_.readable_now() && read_first_into_window() != Step::more) return;
            const bool bytes_buffered = request_.input_pending();  // still only the reader reads
            relay_on_.store(true, std::memory_order_release);
            wake_consumer();  // a consumer waiting for the first piece reads itself from here
            produce_relayed(bytes_buffered);
            return;
        }
        if (request_.wait_fd() >= 0) {
            static std::atomic<bool> told{false};
            if (!told.exchange(true))
                log(LogLevel::info,
                    "window streams run reader-only (two wake-ups a token): the read relay needs "
                    "3 descriptors a stream and leaves " +
                        std::to_string(reserve) +
                        " free under RLIMIT_NOFILE; raise the limit (ulimit -n) for one wake-up");
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

    enum class Step { more, full, over };

    /// Before the relay starts (no role yet: only the reader reads): one
    /// read into the window, parked on when it filled it. `more` when the
    /// stream goes on.
    Step read_first_into_window() {
        const Step step = read_into_window();
        if (step == Step::full) return park() ? Step::more : Step::over;
        return step;
    }

    /// One read of the response into the window, queued and accounted: more
    /// to read, the window full (park), or the body over (its end or error
    /// queued). The reader's, under the role once the relay is on.
    Step read_into_window() {
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

    /// What the consumer's read under the relay found: its data (a view of
    /// consumer_bytes_), a piece stashed for next() (the end, a failure), or
    /// nothing because the reader queued a piece first.
    enum class Relayed { data, stashed, queued };

    /// The consumer's side of the relay, when the queue is empty: holding the
    /// reading role, it waits on the socket and reads the piece itself.
    Relayed read_relayed(std::string_view& out) {
        const Relayed relayed = read_relayed_holding_role(out);
        // Told only now: signalled under the role, the reader woke to wait for it.
        if (reader_end_due_) tell_reader_end();
        return relayed;
    }

    Relayed read_relayed_holding_role(std::string_view& out) {
        std::unique_lock role(role_);
        // The reader queues only with the role: a piece queued before we took
        // it is the next one.
        if (produced_.load(std::memory_order_acquire) > consumed_) return Relayed::queued;
        bool socket_ready = false;  // this wait saw the socket readable
        for (;;) {
            if (body_over_) return stash(Piece{});  // this side read the end already: end again
            if (stop_.load())
                return stash(
                    end_body(error_piece(Error(ErrorCode::cancelled, "stream cancelled"))));
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
    Relayed stash(Piece piece) {
        stashed_ = std::make_unique<Piece>(std::move(piece));
        return Relayed::stashed;
    }
    /// The stashed piece; the end when there is none (after a failure was delivered).
    Piece take_stashed() {
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
    void take_buffered(std::size_t& taken) {
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
    Piece end_body(Piece piece, AfterBody after = AfterBody::close) {
        end_body_locked(after);
        reader_end_due_ = true;  // read_relayed() tells the reader once it gives the role back
        return piece;
    }

    /// The consumer ended the body: the reader, asleep in its wait, ends.
    /// Once: a cancel after it (the handle's destructor) signals no more.
    void tell_reader_end() noexcept {
        reader_end_due_ = false;
        relay_.signal();
        reader_told_end_.store(true);
    }

    /// Under the role (or before the relay): nothing reads the response again.
    /// The socket leaves the relay's waits first: a connection given back may
    /// be waited on by another stream next.
    void end_body_locked(AfterBody after = AfterBody::close) noexcept {
        body_over_ = true;
        relay_.forget_socket();
        if (after == AfterBody::give_back) request_.release();
        request_.close();
    }

    /// Bytes read, by either thread (they take turns under the role, or the
    /// reader alone): counted with plain stores, no locked add per piece, and
    /// the idle deadline restarts.
    void count_read(std::size_t n) noexcept {
        last_read_.store(Clock::now());
        bytes_.store(bytes_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }

    /// The reader's side of the relay: it reads while the consumer is not
    /// waiting for bytes, exactly as the plain loop, and takes the reading
    /// role for each read.
    void produce_relayed(bool bytes_buffered) {
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
            const bool ready = request_.input_pending() ||
                               (socket_ready && (consumer_reads_ == consumer_reads_seen ||
                                                 request_.readable_now()));
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
    bool keep_deadline_while_asleep() {
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
    Clock::time_point consumer_limit() const noexcept {
        return relay_deadlines_.read_limit(last_read_.load());
    }

    /// A relay wait's timeout until `limit`: one millisecond over (epoll
    /// rounds down, and a wait of 0 would spin).
    static int relay_wait_ms(Clock::time_point limit, Clock::time_point now) noexcept {
        return std::min(millis_until(limit, now), INT_MAX - 1) + 1;
    }

    /// Parks until the consumer drains under the low mark. False when the
    /// stream must end (cancelled, or parked past the maximum wait).
    bool park() {
        std::unique_lock lock(mutex_);
        const auto start = Clock::now();
        // The maximum park counts from the moment the reader parks.
        const auto deadline = start + call_->prepared.settings.window_max_park;
        reader_parked_ = true;
        parks_.fetch_add(1, std::memory_order_relaxed);
        bool resumed = true;
        // Until the consumer brings the bytes in flight down to the low mark
        // (at it counts: a low mark of 0 means "until drained", never a hang).
        while (inflight_.load(std::memory_order_acquire) >
               call_->prepared.settings.window_low_bytes) {
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
                break;
            }
            reader_cv_.wait_until(lock, std::min(deadline, now + kWaitSlice));
        }
        reader_parked_ = false;
        parked_us_.fetch_add(
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start)
                    .count()),
            std::memory_order_relaxed);
        return resumed;
    }

    void push(Piece piece) {
        queue_.enqueue(producer_token_, Slot::of(std::move(piece)));
        produced_.store(produced_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        wake_consumer();
    }

    /// After anything the consumer waits for (a piece, a cancel, an overflow).
    void wake_consumer() noexcept {
        pushed_.bump();
        if (consumer_waiting_.load(std::memory_order_seq_cst)) pushed_.wake();
    }

    static Piece error_piece(Error e) {
        Piece p;
        p.kind = Piece::Kind::error;
        p.error = std::move(e);
        return p;
    }

    void note_peak(std::size_t now) {
        std::size_t peak = peak_.load(std::memory_order_relaxed);
        while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
        }
    }

    std::unique_ptr<StreamCall> call_;
    StreamSlot slot_;
    CancelToken token_;
    StreamRequest request_;  ///< opened by the reader; then read by whoever holds role_
    // What the consumer touches at every token, together in the object's
    // first lines: at token rates each wake-up finds them cold, and a field
    // on a line of its own was one more miss a token.
    // The relay: set up by the reader after the head; then the reading role
    // (role_) goes to whichever thread the socket woke.
    ReadRelay relay_;
    std::atomic<bool> relay_on_{false};
    std::atomic<bool> stop_{false}, overflowed_{false};
    bool body_over_ = false;       ///< guarded by role_: the body ended or failed
    bool holds_queued_ = false;    ///< queued_bytes_ go back to spare_ at the next read
    bool reader_end_due_ = false;  ///< consumer thread only: end_body() awaits tell_reader_end()
    std::atomic<bool> consumer_waiting_{false};
    /// The relay's consumer waits without a timer while the reader keeps
    /// its deadline (keep_deadline_while_asleep).
    std::atomic<bool> consumer_unbounded_{false}, reader_keeps_deadline_{false};
    std::mutex role_;  ///< held for every read of request_ once relay_on_
    /// The last bytes read, or the window reopening after a park: the idle
    /// deadline of the consumer's wait counts from it.
    std::atomic<Clock::time_point> last_read_{};
    std::uint64_t consumer_reads_ = 0;  ///< guarded by role_: reads the consumer made
    std::atomic<std::uint64_t> produced_{0};
    std::uint64_t consumed_ = 0;  ///< consumer thread only
    WakeWord pushed_;             ///< bumped on every push: the consumer sleeps on it
    std::atomic<std::uint64_t> bytes_{0};
    // The consumer thread's: the piece next() returns next (the end, a
    // failure, also one found behind the bytes its read returned:
    // take_buffered), its own read's bytes, and the queued piece's bytes
    // its view points into.
    std::unique_ptr<Piece> stashed_;
    std::string consumer_bytes_;
    std::string queued_bytes_;
    std::atomic<std::size_t> inflight_{0};
    Deadlines relay_deadlines_;  ///< a copy made at the relay's start, read by both threads
    // One block to start (the default is six, ~50 KB a stream, most of it
    // never used at token rates); the queue grows by blocks when it must.
    moodycamel::ConcurrentQueue<Slot, WindowQueueTraits> queue_{WindowQueueTraits::BLOCK_SIZE};
    // One producer (the reader thread) and one consumer (the caller's): with
    // tokens, a push goes straight to its producer's blocks instead of
    // looking the thread up in the queue's implicit-producer hash, and a pop
    // goes straight to that producer; fewer lines touched per token.
    moodycamel::ProducerToken producer_token_{queue_};  ///< the reader thread's
    moodycamel::ConsumerToken consumer_token_{queue_};  ///< next()'s (the consumer's)
    SpareRing spare_;                                   ///< storage given back
    std::atomic<bool> after_done_{false};
    std::atomic<bool> reader_told_end_{false};  ///< tell_reader_end() signalled the reader
    std::mutex mutex_;
    std::condition_variable reader_cv_, reader_done_cv_;
    bool reader_parked_ = false;           ///< guarded by mutex_
    bool reader_finished_ = false;         ///< guarded by mutex_
    std::optional<Error> overflow_error_;  ///< guarded by mutex_
    SharedHeaders headers_;
    std::atomic<std::uint64_t> parks_{0}, parked_us_{0};
    std::atomic<std::size_t> peak_{0};
    std::atomic<int> status_{0};
    StreamReadBuffer buffer_;  ///< after the rest: its first lines follow the ones above
    ReaderThread reader_;      ///< last: started after every member above exists
};

}  // namespace

std::unique_ptr<ChunkSource> make_window_source(std::unique_ptr<StreamCall> call, StreamSlot slot) {
    return std::make_unique<WindowSource>(std::move(call), std::move(slot));
}

}  // namespace nous::http::detail
