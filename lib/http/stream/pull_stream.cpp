// The `pull` stream backend: no reader thread; next() reads at most one chunk
// from the socket on the caller's thread. Nothing is buffered beyond it.

#include <csignal>
#include <mutex>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "stream/stream_backends.hpp"
#include "stream/stream_request.hpp"

namespace nous::http::detail {

namespace {

using Piece = ChunkSource::Piece;

class PullSource final : public ChunkSource, public ViewSource {
  public:
    PullSource(std::unique_ptr<StreamCall> call, StreamSlot slot)
        : call_(std::move(call)), slot_(std::move(slot)), request_(*call_, token_, buffer_) {}

    Piece next() override {
        Piece piece;
        if (!opened_ && !finished_) {
            opened_ = true;
            if (auto e = request_.open()) {
                finish_with(std::move(*e));
            } else {
                headers_.set(request_.take_headers());
                status_ = request_.status();
            }
        }
        if (next_data_view(piece.view)) {
            piece.kind = Piece::Kind::data;
        } else if (failure_) {
            piece.kind = Piece::Kind::error;
            piece.error = std::move(failure_);
            failure_.reset();  // delivered once: the end from here
        }
        return piece;
    }

    bool next_data_view(std::string_view& out) override {
        if (!opened_ || finished_) return false;  // next() opens first, or ends
        // The view is of the read buffer: it is read on the consumer's
        // thread, which is done with the previous piece when it asks again.
        switch (request_.read_view(out)) {
            case ResponseReader::Piece::data:
                // One writer (this thread): plain stores, not a locked add, which
                // would also wait for this token's pending (cold) stores.
                bytes_.store(bytes_.load(std::memory_order_relaxed) + out.size(),
                             std::memory_order_relaxed);
                if (out.size() > peak_.load(std::memory_order_relaxed))
                    peak_.store(out.size(), std::memory_order_relaxed);
                return true;
            case ResponseReader::Piece::end:
                finished_ = true;
                request_.release();
                return false;
            case ResponseReader::Piece::error:
                finish_with(token_.cancelled() ? Error(ErrorCode::cancelled, "stream cancelled")
                                               : request_.read_failure());
                return false;
        }
        return false;
    }

    void cancel() noexcept override { token_.cancel(); }

    void finish_after_done() noexcept override {
        // On the caller's thread, right after [DONE] was decoded.
        if (!opened_ || finished_) return;
        finished_ = true;
        request_.drain_and_release(limits::drain_after_done);
    }

    Headers response_headers() const override { return headers_.get(); }

    StreamStats stats() const override {
        StreamStats s;
        s.bytes = bytes_.load();
        s.peak_inflight_bytes = peak_.load();
        s.status = status_.load();
        return s;
    }

  private:
    /// The stream failed: next() returns `e`, then the end.
    void finish_with(Error e) {
        finished_ = true;
        failure_ = std::move(e);
    }

    std::unique_ptr<StreamCall> call_;
    StreamSlot slot_;
    CancelToken token_;
    StreamRequest request_;
    bool opened_ = false, finished_ = false;
    // Written on the caller's thread, read by stats() from any thread; beside
    // the flags, which every read touches too.
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::size_t> peak_{0};
    std::atomic<int> status_{0};
    SharedHeaders headers_;
    std::optional<Error> failure_;  ///< what next() returns once finished_ by a failure
    StreamReadBuffer buffer_;       ///< last: its first lines follow the ones above
};

}  // namespace

std::unique_ptr<ChunkSource> make_pull_source(std::unique_ptr<StreamCall> call, StreamSlot slot) {
    return std::make_unique<PullSource>(std::move(call), std::move(slot));
}

}  // namespace nous::http::detail
