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

class PullSource final : public ChunkSource {
  public:
    PullSource(std::unique_ptr<StreamCall> call, StreamSlot slot)
        : call_(std::move(call)), slot_(std::move(slot)), request_(*call_, token_) {}

    Piece next() override {
        Piece piece;
        if (finished_) return piece;  // end
        if (!opened_) {
            opened_ = true;
            if (auto e = request_.open()) return fail(std::move(*e));
            headers_.set(request_.headers());
            status_ = request_.status();
        }
        // The piece is a view of the read buffer: it is read on the consumer's
        // thread, which is done with the previous piece when it asks again.
        std::optional<Error> error;
        switch (request_.read_view(piece.view, error)) {
            case ResponseReader::Piece::data:
                piece.kind = Piece::Kind::data;
                // One writer (this thread): plain stores, not a locked add, which
                // would also wait for this token's pending (cold) stores.
                bytes_.store(bytes_.load(std::memory_order_relaxed) + piece.view.size(),
                             std::memory_order_relaxed);
                if (piece.view.size() > peak_.load(std::memory_order_relaxed))
                    peak_.store(piece.view.size(), std::memory_order_relaxed);
                return piece;
            case ResponseReader::Piece::end:
                finished_ = true;
                request_.release();
                return piece;
            case ResponseReader::Piece::error:
                return fail(token_.cancelled() ? Error(ErrorCode::cancelled, "stream cancelled")
                                               : std::move(*error));
        }
        return piece;
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
    Piece fail(Error e) {
        finished_ = true;
        Piece p;
        p.kind = Piece::Kind::error;
        p.error = std::move(e);
        return p;
    }

    std::unique_ptr<StreamCall> call_;
    StreamSlot slot_;
    CancelToken token_;
    StreamRequest request_;
    bool opened_ = false, finished_ = false;
    // Written on the caller's thread, read by stats() from any thread.
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::size_t> peak_{0};
    std::atomic<int> status_{0};
    SharedHeaders headers_;
};

}  // namespace

std::unique_ptr<ChunkSource> make_pull_source(std::unique_ptr<StreamCall> call, StreamSlot slot) {
    return std::make_unique<PullSource>(std::move(call), std::move(slot));
}

}  // namespace nous::http::detail
