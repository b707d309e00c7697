#pragma once
// The `window` stream backend's source (nous_http internal): a reader thread
// per stream feeds body chunks into a moodycamel queue, with byte accounting
// beside it that parks the reader above the high mark until the consumer
// drains under the low mark. A parked reader does not read the socket, so TCP
// backpressure reaches the server. A consumer waiting in next() with the
// queue empty reads the socket itself (the read relay,
// transport/read_relay.hpp): the reader reads only while the consumer is
// away. window_stream.cpp: the consumer's side and the reader's loop;
// window_relay.cpp: the relay; window_queue.hpp: the queue's slot and the
// spare storage ring. docs/design/backpressure.md.

#include <concurrentqueue/concurrentqueue.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "core/cancel.hpp"
#include "core/wake_word.hpp"
#include "stream/reader_thread.hpp"
#include "stream/stream_backends.hpp"
#include "stream/stream_request.hpp"
#include "stream/window_queue.hpp"
#include "transport/read_relay.hpp"

namespace nous::http::detail {

class WindowSource final : public ChunkSource, public ViewSource {
  public:
    WindowSource(std::unique_ptr<StreamCall> call, StreamSlot slot);

    ~WindowSource() override;

    Piece next() override;

    bool next_data_view(std::string_view& out) override;

    void cancel() noexcept override;

    StreamStats stats() const override;

    void finish_after_done() noexcept override;

    void recycle(std::string&& bytes) noexcept override { spare_.give(std::move(bytes)); }

    Headers response_headers() const override { return headers_.get(); }

  private:
    /// What becomes of the connection when the body is over: given back
    /// (read to its end: to the pool when it may serve another request), or closed.
    enum class AfterBody { give_back, close };

    enum class Step { more, full, over };

    /// What the consumer's read under the relay found: its data (a view of
    /// consumer_bytes_), a piece stashed for next() (the end, a failure), or
    /// nothing because the reader queued a piece first.
    enum class Relayed { data, stashed, queued };

    void run();

    void produce();

    bool open_request();

    void push_failure(Error e);

    void produce_opened();

    void reader_failed(const std::exception& e);

    /// Before the relay starts (no role yet: only the reader reads): one
    /// read into the window, parked on when it filled it. `more` when the
    /// stream goes on.
    Step read_first_into_window();

    /// One read of the response into the window, queued and accounted: more
    /// to read, the window full (park), or the body over (its end or error
    /// queued). The reader's, under the role once the relay is on.
    Step read_into_window();

    /// Parks until the consumer drains under the low mark. False when the
    /// stream must end (cancelled, or parked past the maximum wait), its
    /// last piece queued or its overflow flagged: the caller only returns.
    bool park();

    void push(Piece piece);

    /// After anything the consumer waits for (a piece, a cancel, an overflow).
    void wake_consumer() noexcept;

    static Piece error_piece(Error e);

    void note_peak(std::size_t now);

    /// The consumer's side of the relay, when the queue is empty: holding the
    /// reading role, it waits on the socket and reads the piece itself.
    Relayed read_relayed(std::string_view& out);

    Relayed read_relayed_holding_role(std::string_view& out);

    /// A piece next() returns next (consumer thread only).
    /// Once a stream at most, but for repeated calls after the end: out of
    /// the object's hot lines.
    Relayed stash(Piece piece);

    /// The stashed piece; the end when there is none (after a failure was delivered).
    Piece take_stashed();

    /// After the consumer's read, the rest of what the read buffer holds goes
    /// into the same piece: bytes left there wake no wait, and handing them
    /// to the reader cost a signal and a hand-off of the role per event when
    /// the server sends faster than an event a read (a 3x cost per token,
    /// unpaced). The body's end or failure behind them is taken too: the end
    /// gives the connection back now (the piece is a copy), a failure is the
    /// next piece. Under the role.
    void take_buffered(std::size_t& taken);

    /// The consumer read the body's end or failure, or gave up waiting: the
    /// reader ends without queueing anything. Under the role.
    Piece end_body(Piece piece, AfterBody after = AfterBody::close);

    /// The consumer ended the body: the reader, asleep in its wait, ends.
    /// Once: a cancel after it (the handle's destructor) signals no more.
    void tell_reader_end() noexcept;

    /// Under the role (or before the relay): nothing reads the response again.
    /// The socket leaves the relay's waits first: a connection given back may
    /// be waited on by another stream next.
    void end_body_locked(AfterBody after = AfterBody::close) noexcept;

    /// Bytes read, by either thread (they take turns under the role, or the
    /// reader alone): counted with plain stores, no locked add per piece, and
    /// the idle deadline restarts.
    void count_read(std::size_t n) noexcept;

    /// The reader's side of the relay: it reads while the consumer is not
    /// waiting for bytes, exactly as the plain loop, and takes the reading
    /// role for each read. `seen`: the relay's word, read before the
    /// socket was armed (when nothing was buffered).
    void produce_relayed(bool bytes_buffered, std::uint32_t seen);

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
    std::mutex role_;  ///< held for every read of request_ once relay_on_
    /// The last bytes read, or the window reopening after a park: a
    /// consumer coming back to an idle gap already past the deadline hears it at once.
    std::atomic<Clock::time_point> last_read_{};
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

}  // namespace nous::http::detail
