// The resolution chain for streams: per call > NOUS_HTTP_STREAM_BACKEND > app config > "window".

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "nous/http/backend.hpp"
#include "nous/http/log.hpp"
#include "nous/http/stream.hpp"
#include "nous/mock/mock_server.hpp"

using namespace nous::http;

namespace {

/// A stream backend that answers from memory: one event naming itself.
class CannedSource : public ChunkSource {
  public:
    explicit CannedSource(std::string body) : body_(std::move(body)) {}
    Piece next() override {
        Piece p;
        if (sent_) return p;  // end
        sent_ = true;
        p.kind = Piece::Kind::data;
        p.bytes = body_;
        return p;
    }
    void cancel() noexcept override {}

  private:
    std::string body_;
    bool sent_ = false;
};

class CannedBackend : public StreamBackend {
  public:
    explicit CannedBackend(std::string name) : name_(std::move(name)) {}
    Stream open(const Request&, const Options& options) override {
        return Stream(std::make_unique<CannedSource>("data: from " + name_ + "\n\n"),
                      decoder_for(options));
    }

  private:
    std::string name_;
};

void register_canned(const std::string& name) {
    register_stream_backend(name, [name] { return std::make_shared<CannedBackend>(name); });
}

std::string first_data(Stream s) {
    auto item = s.next();
    if (!item) return "<none>";
    return item->is_event() ? item->event.data
                            : "<error " + std::string(to_string(item->error->code)) + ">";
}

/// A source that hands out views of one small buffer it overwrites at each
/// next(): what a decoder keeps across pieces it must have copied.
class ViewSource : public ChunkSource {
  public:
    ViewSource(std::string body, std::size_t piece, int& recycled)
        : body_(std::move(body)), piece_(piece), recycled_(recycled) {}
    Piece next() override {
        Piece p;
        if (at_ == body_.size()) return p;  // end
        const std::size_t n = std::min(piece_, body_.size() - at_);
        buffer_.assign(buffer_.size(), '#');  // the last piece's bytes are gone
        body_.copy(buffer_.data(), n, at_);
        at_ += n;
        p.kind = Piece::Kind::data;
        p.view = std::string_view(buffer_.data(), n);
        return p;
    }
    void cancel() noexcept override {}
    void recycle(std::string&&) noexcept override { ++recycled_; }

  private:
    std::string body_;
    std::size_t piece_, at_ = 0;
    std::string buffer_ = std::string(64, '#');
    int& recycled_;
};

/// A source that hands out its body in pieces of bytes of their own, and
/// records what the stream gives back.
class OwnedPiecesSource : public ChunkSource {
  public:
    OwnedPiecesSource(std::string body, std::size_t piece, std::vector<std::string>& recycled)
        : body_(std::move(body)), piece_(piece), recycled_(recycled) {}
    Piece next() override {
        Piece p;
        if (at_ == body_.size()) return p;  // end
        const std::size_t n = std::min(piece_, body_.size() - at_);
        p.kind = Piece::Kind::data;
        p.bytes = body_.substr(at_, n);
        at_ += n;
        return p;
    }
    void cancel() noexcept override {}
    void recycle(std::string&& bytes) noexcept override { recycled_.push_back(std::move(bytes)); }

  private:
    std::string body_;
    std::size_t piece_, at_ = 0;
    std::vector<std::string>& recycled_;
};

struct Env {
    explicit Env(const char* v) { ::setenv("NOUS_HTTP_STREAM_BACKEND", v, 1); }
    ~Env() { ::unsetenv("NOUS_HTTP_STREAM_BACKEND"); }
};

const char* kUnreachable = "http://127.0.0.1:1/v1/chat/completions";

}  // namespace

TEST_CASE("a source may hand out views of its own buffer, piece by piece") {
    const std::string body =
        "event: a\ndata: first\n\n: keep-alive\ndata: sec\ndata: ond\n\nid: 7\ndata: "
        "third event, longer than a piece\n\ndata: [DONE]\n\n";
    for (std::size_t piece : {1, 3, 7, 64}) {
        INFO("pieces of " << piece << " bytes");
        int recycled = 0;
        Stream s(std::make_unique<ViewSource>(body, piece, recycled), nullptr);
        std::vector<std::string> got;
        for (auto item = s.next(); item && item->is_event(); item = s.next())
            got.push_back(item->event.type + "|" + item->event.data + "|" + item->event.id.str());
        CHECK(got == std::vector<std::string>{"a|first|", "message|sec\nond|",
                                              "message|third event, longer than a piece|7"});
        CHECK(s.stats().done_seen);
        CHECK(recycled == 0);  // a view's storage is the source's own
    }
}

TEST_CASE("a source's own bytes go back to it, each piece once its events were read") {
    // No [DONE]: the stream asks the source again after the last piece, so
    // every piece comes back, in order, whole.
    const std::string body = "data: one\n\ndata: two\n\n: note\ndata: three\n\n";
    for (std::size_t piece : {1, 5, 64}) {
        INFO("pieces of " << piece << " bytes");
        std::vector<std::string> recycled;
        Stream s(std::make_unique<OwnedPiecesSource>(body, piece, recycled), nullptr);
        std::vector<std::string> got;
        std::size_t given_back_before_last = 0;
        for (auto item = s.next(); item && item->is_event(); item = s.next()) {
            got.push_back(item->event.data);
            given_back_before_last = recycled.size();
        }
        CHECK(got == std::vector<std::string>{"one", "two", "three"});
        std::string joined;
        for (const auto& r : recycled) joined += r;
        CHECK(joined == body);
        CHECK(recycled.size() == (body.size() + piece - 1) / piece);
        // The piece the last event came from was still in use while it was read.
        CHECK(given_back_before_last < recycled.size());
    }
}

TEST_CASE("streams: per-call beats env beats config beats the window default") {
    register_canned("s.a");
    register_canned("s.b");
    register_canned("s.c");
    Config c;
    c.stream_backend = "s.c";
    configure(c);
    {
        Env env("s.b");
        Options o;
        o.stream_backend = "s.a";
        CHECK(first_data(stream(kUnreachable, "{}", {}, o)) == "from s.a");
        CHECK(first_data(stream(kUnreachable, "{}")) == "from s.b");
    }
    CHECK(first_data(stream(kUnreachable, "{}")) == "from s.c");
    configure({});
    CHECK(resolve_stream_backend_name({}).value() == "window");
    MockServer server;
    server.start();
    CHECK(first_data(stream(server.base_url() + "/v1/chat/completions", R"({"stream":true})"))
              .find("chat.completion.chunk") != std::string::npos);
}

TEST_CASE(
    "streams: an unknown per-call name is invalid_argument, an unknown env name falls back to "
    "config, warned once") {
    Options o;
    o.stream_backend = "no.such.stream";
    CHECK(first_data(stream(kUnreachable, "{}", {}, o)) == "<error invalid_argument>");
    register_canned("s.cfg");
    Config c;
    c.stream_backend = "s.cfg";
    configure(c);
    std::mutex mutex;
    int warnings = 0;
    set_log_sink([&](LogLevel, std::string_view m) {
        std::lock_guard lock(mutex);
        warnings += m.find("stream.typo") != std::string_view::npos;
    });
    {
        Env env("stream.typo");
        CHECK(first_data(stream(kUnreachable, "{}")) == "from s.cfg");
        CHECK(first_data(stream(kUnreachable, "{}")) == "from s.cfg");
    }
    set_log_sink(nullptr);
    configure({});
    CHECK(warnings == 1);
}

TEST_CASE("streams: a custom backend still gets bad input refused first") {
    register_canned("s.guarded");
    Options o;
    o.stream_backend = "s.guarded";
    CHECK(first_data(stream(kUnreachable, "{}", {{"X", "a\nb"}}, o)) == "<error invalid_argument>");
}

namespace {

/// A custom source that never delivers: next() blocks until cancel().
class SilentSource : public ChunkSource {
  public:
    Piece next() override {
        std::unique_lock lock(mutex_);
        cancelled_cv_.wait(lock, [&] { return cancelled_; });
        Piece p;
        p.kind = Piece::Kind::error;
        p.error = Error(ErrorCode::cancelled, "silent source cancelled");
        return p;
    }
    void cancel() noexcept override {
        std::lock_guard lock(mutex_);
        cancelled_ = true;
        cancelled_cv_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable cancelled_cv_;
    bool cancelled_ = false;
};

class SilentBackend : public StreamBackend {
  public:
    Stream open(const Request&, const Options& options) override {
        return Stream(std::make_unique<SilentSource>(), decoder_for(options));
    }
};

}  // namespace

TEST_CASE("streams: content deadlines end a custom backend's stream too (through its cancel)") {
    register_stream_backend("s.silent", [] { return std::make_shared<SilentBackend>(); });
    Options o;
    o.stream_backend = "s.silent";
    o.event_idle_timeout = std::chrono::milliseconds(200);
    Stream s = stream(kUnreachable, "{}", {}, o);
    auto item = s.next();
    REQUIRE(item);
    REQUIRE(item->is_error());
    CHECK(item->error->code == ErrorCode::timeout_read);
    CHECK_THAT(item->error->message, Catch::Contains("event_idle_timeout"));
}
