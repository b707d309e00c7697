// What a server application streaming to its own users pays per token:
// N concurrent streamed chat completions through nous::llm::run_chat, one
// thread each, at the server's own pacing (DESIGN "Benchmark driver
// contract"), and the floors of that design in the same program:
//   --client nous-llm   run_chat, window or pull backend (the default);
//                       --prompt-bytes N sends a user message of N bytes
//   --client nous-stream nous::http::stream alone (no llm layer), window or pull
//   --client raw-thread a thread per stream, blocking recv, events counted
//   --client raw-epoll  one epoll thread for every stream, events counted
//   --client raw-watch  the window backend's read relay with nothing else: a
//                       thread per stream in a blocking recv, its socket
//                       disarmed in one epoll for the process, a check booked
//                       after each read for one watch thread, a second thread
//                       per stream asleep (the reader): the floor of that
//                       design, events counted
// Without --url-base the mock runs in a child process (forked before any
// thread), so that the CPU figure (getrusage of this process: user + system)
// is the client's alone. Prints one JSON line.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.hpp"
#include "mock_child.hpp"
#include "nous/http/stream.hpp"
#include "nous/llm/chat.hpp"
#include "nous/llm/metrics.hpp"
#include "nous/llm/otlp.hpp"
#include "nous/mock/mock_server.hpp"

namespace po = boost::program_options;

namespace {

struct Load {
    std::string url_base;
    int streams = 200;
    int rounds = 1;
    std::string stream_backend = "window";
    nous::llm::Provider provider = nous::llm::Provider::openai;
    std::string client = "nous-llm";
    /// nous-llm: the user message's size in bytes (0: a short sentence).
    std::size_t prompt_bytes = 0;
    bool metrics = false;  ///< nous-llm: every call observed by one built-in Metrics
    /// nous-llm: every call exported by this OtlpExporter (to the server's /v1/traces).
    std::shared_ptr<nous::llm::OtlpExporter> otlp;
};

struct Tally {
    explicit Tally(std::size_t streams) : first_token_ms(streams) {}
    std::atomic<std::uint64_t> tokens{0}, errors{0};
    /// Each stream's time to its first token, in the order they came: a
    /// slot each, taken without a lock (a lock a stream would be the
    /// bench's own cost, contended when streams start together).
    std::vector<double> first_token_ms;
    std::atomic<std::size_t> first_tokens{0};

    void add_first_token(double ms) {
        const std::size_t slot = first_tokens.fetch_add(1, std::memory_order_relaxed);
        if (slot < first_token_ms.size()) first_token_ms[slot] = ms;
    }
};

/// A stream's time to first token, from before it connects: mark() at
/// every token, the first one kept.
class FirstToken {
  public:
    explicit FirstToken(Tally& tally) : tally_(tally) {}
    void mark() {
        if (marked_) return;
        marked_ = true;
        tally_.add_first_token(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
                .count());
    }

  private:
    Tally& tally_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    bool marked_ = false;
};

/// The OpenAI chat body the raw floors and nous-stream send (run_chat builds its own).
constexpr std::string_view kChatBody =
    R"({"model":"mock-1","messages":[{"role":"user","content":"Tell me a story."}],"stream":true})";

/// A thread per stream through the library: `one_stream(options, tokens,
/// first)` runs one stream, adds its text tokens (marking `first` at each),
/// and says whether it succeeded;
/// each thread runs load.rounds of them, one after another.
template <typename OneStream>
void library_streams(const Load& load, Tally& tally, OneStream one_stream) {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(load.streams));
    for (int i = 0; i < load.streams; ++i) {
        threads.emplace_back([&] {
            nous::http::Options options;
            options.stream_backend = load.stream_backend;
            options.max_retries = 0;
            for (int round = 0; round < load.rounds; ++round) {
                std::uint64_t tokens = 0;
                FirstToken first(tally);
                const bool ok = one_stream(options, tokens, first);
                tally.tokens += tokens;
                if (!ok) tally.errors += 1;
            }
        });
    }
    for (auto& t : threads) t.join();
}

// ---- nous-llm: run_chat per thread -------------------------------------------------

void run_chat_streams(const Load& load, Tally& tally) {
    nous::llm::ChatRequest request;
    request.provider = load.provider;
    using nous::llm::Provider;
    // Bedrock's paths start at the host (/model/M/converse-stream), signed
    // for a region with the environment's keys (main() sets bench ones).
    request.base_url = load.url_base + (load.provider == Provider::gemini    ? "/v1beta"
                                        : load.provider == Provider::bedrock ? ""
                                                                             : "/v1");
    if (load.provider == Provider::bedrock) request.region = "us-east-1";
    request.model = "mock-1";
    request.messages.push_back(
        nous::llm::ChatMessage::user(load.prompt_bytes == 0 ? std::string("Tell me a story.")
                                                            : std::string(load.prompt_bytes, 'a')));
    if (load.metrics) request.observer = std::make_shared<nous::llm::Metrics>();
    if (load.otlp) request.observer = load.otlp;
    library_streams(
        load, tally,
        [&](const nous::http::Options& options, std::uint64_t& tokens, FirstToken& first) {
            auto result = nous::llm::run_chat(request, options, [&](const nous::llm::Delta& d) {
                if (d.text.empty()) return true;
                ++tokens;
                first.mark();
                return true;
            });
            return static_cast<bool>(result);
        });
}

// ---- nous-stream: the HTTP layer alone ---------------------------------------------

/// nous::http::stream and next_view() per thread, no llm layer: what the
/// HTTP layer costs a token, apart from the delta parser and run_chat.
void http_stream_streams(const Load& load, Tally& tally) {
    const std::string url = load.url_base + "/v1/chat/completions";
    library_streams(
        load, tally,
        [&](const nous::http::Options& options, std::uint64_t& tokens, FirstToken& first) {
            auto stream = nous::http::stream(url, kChatBody, {}, options);
            std::uint64_t events = 0;
            bool failed = false;
            while (auto item = stream.next_view()) {
                if (item->is_event()) {
                    ++events;
                    first.mark();
                }
                failed = item->is_error();
                if (!item->is_event()) break;
            }
            // Tokens as the raw floors count them: the finish chunk is not one
            // ([DONE] is an item of its own, not an event).
            tokens += events > 1 ? events - 1 : 0;
            return !failed;
        });
}

// ---- the floors: raw sockets, events counted -------------------------------------------

struct Target {
    sockaddr_in addr{};
    std::string request;  ///< the whole HTTP request, sent once per stream
};

Target target_of(const Load& load) {
    Target t;
    const std::string rest = load.url_base.substr(load.url_base.find("://") + 3);
    const std::string host = rest.substr(0, rest.find(':'));
    const int port = std::stoi(rest.substr(rest.find(':') + 1));
    t.addr.sin_family = AF_INET;
    t.addr.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &t.addr.sin_addr);
    t.request = "POST /v1/chat/completions HTTP/1.1\r\nHost: " + host +
                "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
                "Connection: close\r\nContent-Length: " +
                std::to_string(kChatBody.size()) + "\r\n\r\n" + std::string(kChatBody);
    return t;
}

int connect_to(const Target& t) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&t.addr), sizeof t.addr) != 0 ||
        ::send(fd, t.request.data(), t.request.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(t.request.size())) {
        ::close(fd);
        return -1;
    }
    return fd;
}

/// Counts SSE event ends ("\n\n") across reads: `last` is the previous read's final byte.
std::uint64_t count_events(const char* p, std::size_t n, char& last) {
    std::uint64_t events = 0;
    if (n == 0) return 0;
    if (last == '\n' && p[0] == '\n') ++events;
    const char* end = p + n;
    for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\n', end - q)));) {
        if (q + 1 < end && q[1] == '\n') ++events;
        ++q;
    }
    last = p[n - 1];
    return events;
}

/// A raw floor's stream, read by blocking recv calls on the thread's own
/// stack: its events counted, its first token marked.
struct BlockingEventReader {
    char buffer[16384];
    std::uint64_t events = 0;
    char last = 0;

    /// One recv; false at the stream's end (or a failure).
    bool read(int fd, FirstToken& first) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) return false;
        events += count_events(buffer, static_cast<std::size_t>(n), last);
        if (events > 0) first.mark();
        return true;
    }
};

/// Every stream's non-token events: the finish chunk and [DONE] (no usage asked).
constexpr std::uint64_t kEventsBesideTokens = 2;

/// A thread per stream, a new connection per round, its events counted by
/// `count_stream(fd, first)` (marking `first` at each read that held one).
template <typename CountStream>
void thread_per_stream(const Load& load, Tally& tally, CountStream count_stream) {
    const Target target = target_of(load);
    std::vector<std::thread> threads;
    for (int i = 0; i < load.streams; ++i) {
        threads.emplace_back([&] {
            for (int round = 0; round < load.rounds; ++round) {
                FirstToken first(tally);
                int fd = connect_to(target);
                if (fd < 0) {
                    tally.errors += 1;
                    continue;
                }
                const std::uint64_t events = count_stream(fd, first);
                ::close(fd);
                tally.tokens += events > kEventsBesideTokens ? events - kEventsBesideTokens : 0;
            }
        });
    }
    for (auto& t : threads) t.join();
}

void raw_thread_streams(const Load& load, Tally& tally) {
    thread_per_stream(load, tally, [](int fd, FirstToken& first) {
        BlockingEventReader counted;
        while (counted.read(fd, first)) {
        }
        return counted.events;
    });
}

/// A thread with the stack size the library gives a stream's reader
/// (256 KiB): the relay floor's second thread costs what the library's does.
class SmallStackThread {
  public:
    explicit SmallStackThread(std::function<void()> body) : body_(std::move(body)) {
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 256 * 1024);
        const int failed = pthread_create(&thread_, &attributes, &SmallStackThread::run, this);
        pthread_attr_destroy(&attributes);
        if (failed != 0) throw std::system_error(failed, std::generic_category(), "pthread_create");
    }
    SmallStackThread(const SmallStackThread&) = delete;
    SmallStackThread& operator=(const SmallStackThread&) = delete;
    /// Joined here if not before: the thread runs a body that refers to this object.
    ~SmallStackThread() { join(); }
    void join() {
        if (joined_) return;
        pthread_join(thread_, nullptr);
        joined_ = true;
    }

  private:
    static void* run(void* self) {
        static_cast<SmallStackThread*>(self)->body_();
        return nullptr;
    }
    std::function<void()> body_;
    pthread_t thread_{};
    bool joined_ = false;
};

/// The read relay's floor (docs/design/backpressure.md "The read relay"):
/// the stream's thread blocks in recv, its socket in one epoll instance for
/// the whole process, disarmed (EPOLLONESHOT) from the start. Going away
/// after each read it counts its visit and books a check 25-50 ms ahead
/// under one lock for the process; one watch thread makes the checks as
/// they come due, and sleeps for good (an eventfd wakes it) when none is
/// booked (a stream still away would have its reader woken to arm
/// the socket: at the server's pace none is). The reader, a second thread
/// per stream, sleeps on a futex. No descriptor beside the socket. Per
/// stream and per token, the system calls and hand-offs the window backend
/// cannot do without.
void raw_watch_streams(const Load& load, Tally& tally) {
    using Clock = std::chrono::steady_clock;
    constexpr Clock::duration kCheckDelay = std::chrono::milliseconds(25);
    const int shared = ::epoll_create1(EPOLL_CLOEXEC);
    const int stop = ::eventfd(0, EFD_CLOEXEC);
    const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    constexpr std::uint64_t kStop = ~std::uint64_t{0}, kWake = kStop - 1;
    epoll_event stop_event{};
    stop_event.events = EPOLLIN;
    stop_event.data.u64 = kStop;
    ::epoll_ctl(shared, EPOLL_CTL_ADD, stop, &stop_event);
    epoll_event wake_event = stop_event;
    wake_event.data.u64 = kWake;
    ::epoll_ctl(shared, EPOLL_CTL_ADD, wake, &wake_event);
    // Each stream's visit count, for the whole run: a check never outlives it.
    std::vector<std::atomic<std::uint32_t>> visits(static_cast<std::size_t>(load.streams) *
                                                   static_cast<std::size_t>(load.rounds));
    std::atomic<std::size_t> next_stream{0};
    struct Check {
        std::size_t stream;
        std::uint32_t visit;
        Clock::time_point due;
    };
    std::mutex booked_mutex;
    std::vector<Check> booked;
    bool sleeps_for_good = false;  // guarded by booked_mutex: a booking wakes the watch
    std::atomic<std::uint64_t> found_away{0};
    std::thread watcher([&] {
        epoll_event ready[256];
        std::vector<Check> checks;
        std::size_t head = 0;
        for (;;) {
            int timeout = -1;  // none booked: until a booking wakes it
            {
                std::lock_guard lock(booked_mutex);
                checks.insert(checks.end(), booked.begin(), booked.end());
                booked.clear();
                sleeps_for_good = head == checks.size();
            }
            if (head < checks.size())
                timeout = static_cast<int>(std::max<std::chrono::milliseconds::rep>(
                    0, std::chrono::ceil<std::chrono::milliseconds>(checks[head].due - Clock::now())
                           .count()));
            const int n = ::epoll_wait(shared, ready, 256, timeout);
            if (n < 0 && errno != EINTR) return;
            for (int k = 0; k < n; ++k) {
                if (ready[k].data.u64 == kStop) return;
                std::uint64_t count;
                (void)!::read(wake, &count, sizeof count);
            }
            const Clock::time_point now = Clock::now();
            for (; head < checks.size() && checks[head].due <= now; ++head)
                if (visits[checks[head].stream].load(std::memory_order_acquire) ==
                    checks[head].visit)
                    found_away.fetch_add(1, std::memory_order_relaxed);  // would wake its reader
            if (head * 2 >= checks.size()) {
                checks.erase(checks.begin(), checks.begin() + static_cast<std::ptrdiff_t>(head));
                head = 0;
            }
        }
    });
    thread_per_stream(load, tally, [&](int fd, FirstToken& first) {
        const std::size_t me = next_stream.fetch_add(1);
        std::atomic<std::uint32_t>& my_visits = visits[me];
        epoll_event disarmed{};
        disarmed.events = EPOLLONESHOT;
        disarmed.data.u64 = static_cast<std::uint64_t>(fd);
        ::epoll_ctl(shared, EPOLL_CTL_ADD, fd, &disarmed);
        std::atomic<int> reader_word{0};
        // The reader's part: asleep until the end, on a thread started as
        // the library starts a reader's (a 256 KiB stack, not glibc's 8 MiB
        // default, whose mapping costs more a stream on a virtual machine).
        SmallStackThread reader([&] {
            while (reader_word.load() == 0) reader_word.wait(0);
        });
        BlockingEventReader counted;
        std::uint32_t visit = 0;
        for (;;) {
            my_visits.store(++visit, std::memory_order_release);  // back
            if (!counted.read(fd, first)) break;
            my_visits.store(++visit, std::memory_order_release);  // away
            bool wake_watch;
            {
                std::lock_guard lock(booked_mutex);
                // Due on the delay's grid, as the library's checks are: the
                // watch wakes once for all the checks of a step.
                const auto earliest = (Clock::now() + kCheckDelay).time_since_epoch();
                const Clock::time_point due((earliest + kCheckDelay - Clock::duration(1)) /
                                            kCheckDelay * kCheckDelay);
                booked.push_back(Check{me, visit, due});
                wake_watch = std::exchange(sleeps_for_good, false);
            }
            const std::uint64_t one = 1;
            if (wake_watch) (void)!::write(wake, &one, sizeof one);
        }
        ::epoll_ctl(shared, EPOLL_CTL_DEL, fd, nullptr);
        reader_word.store(1);
        reader_word.notify_one();
        reader.join();
        return counted.events;
    });
    const std::uint64_t one = 1;
    (void)!::write(stop, &one, sizeof one);
    watcher.join();
    ::close(stop);
    ::close(wake);
    ::close(shared);
    std::fprintf(stderr, "chat_load: raw-watch: the watch found a stream away %llu times\n",
                 static_cast<unsigned long long>(found_away.load()));
}

void raw_epoll_streams(const Load& load, Tally& tally) {
    const Target target = target_of(load);
    for (int round = 0; round < load.rounds; ++round) {
        int ep = ::epoll_create1(EPOLL_CLOEXEC);
        struct Conn {
            int fd = -1;
            std::uint64_t events = 0;
            char last = 0;
            std::optional<FirstToken> first;
        };
        std::vector<Conn> conns(static_cast<std::size_t>(load.streams));
        int open = 0;
        for (std::size_t i = 0; i < conns.size(); ++i) {
            conns[i].first.emplace(tally);
            conns[i].fd = connect_to(target);
            if (conns[i].fd < 0) {
                tally.errors += 1;
                continue;
            }
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u64 = i;
            ::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
            ++open;
        }
        char buffer[16384];
        std::vector<epoll_event> ready(256);
        while (open > 0) {
            const int n = ::epoll_wait(ep, ready.data(), static_cast<int>(ready.size()), -1);
            for (int k = 0; k < n; ++k) {
                Conn& c = conns[ready[k].data.u64];
                const ssize_t got = ::recv(c.fd, buffer, sizeof buffer, 0);
                if (got > 0) {
                    c.events += count_events(buffer, static_cast<std::size_t>(got), c.last);
                    if (c.events > 0) c.first->mark();
                    continue;
                }
                ::epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
                ::close(c.fd);
                --open;
                tally.tokens += c.events > kEventsBesideTokens ? c.events - kEventsBesideTokens : 0;
            }
        }
        ::close(ep);
    }
}

}  // namespace

int main(int argc, char** argv) {
    Load load;
    std::string provider = "openai";
    int mock_tokens = 200;
    double mock_rate = 50;
    po::options_description desc("chat_load [options]");
    desc.add_options()("help,h", "show this help")(
        "url-base", po::value(&load.url_base),
        "a mock or provider-compatible server (default: nouscli's mock in a child process)")(
        "streams", po::value(&load.streams), "concurrent streams (default 200)")(
        "rounds", po::value(&load.rounds), "streams per thread, one after another (default 1)")(
        "stream-backend", po::value(&load.stream_backend), "window|pull (default window)")(
        "provider", po::value(&provider),
        "openai|openai-responses|anthropic|gemini|bedrock (bedrock: SigV4-signed with the "
        "environment's AWS keys, bench ones when none are set)")(
        "client", po::value(&load.client),
        "nous-llm (default), nous-stream, raw-thread, raw-epoll, raw-watch")(
        "mock-tokens", po::value(&mock_tokens), "the child mock's tokens per stream (200)")(
        "mock-tokens-per-second", po::value(&mock_rate),
        "the child mock's pace per stream (50; 0: unpaced)")(
        "metrics", "nous-llm: every call recorded by one nous::llm::Metrics (its observer)")(
        "prompt-bytes", po::value(&load.prompt_bytes),
        "nous-llm: a user message of this many bytes (a long conversation's memory a stream)")(
        "otlp",
        "nous-llm: every call exported by an OtlpExporter to the server's /v1/traces and "
        "/v1/metrics (nouscli's mock receives them), flushed before the end is timed");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const std::exception& e) {
        std::cerr << "chat_load: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc;
        return 0;
    }
    auto parsed = nous::llm::provider_from_name(provider);
    if (!parsed) {
        std::cerr << "chat_load: unknown provider " << provider << "\n";
        return 2;
    }
    load.provider = *parsed;
    if (load.provider == nous::llm::Provider::bedrock && !std::getenv("AWS_ACCESS_KEY_ID")) {
        // The mock checks no signature unless told a secret: any keys sign.
        ::setenv("AWS_ACCESS_KEY_ID", "AKIDBENCH", 1);
        ::setenv("AWS_SECRET_ACCESS_KEY", "bench-secret", 1);
    }
    load.metrics = vm.count("metrics") > 0;
    // Each --client and what runs it: the names are checked and dispatched from here alone.
    using Client = void (*)(const Load&, Tally&);
    const std::pair<std::string_view, Client> clients[] = {
        {"nous-llm", run_chat_streams},     {"nous-stream", http_stream_streams},
        {"raw-thread", raw_thread_streams}, {"raw-epoll", raw_epoll_streams},
        {"raw-watch", raw_watch_streams},
    };
    Client run_client = nullptr;
    for (const auto& [name, client] : clients)
        if (load.client == name) run_client = client;
    if (!run_client) {
        std::cerr << "chat_load: unknown client " << load.client << "\n";
        return 2;
    }
    if (load.client != "nous-llm" && load.provider != nous::llm::Provider::openai) {
        std::cerr << "chat_load: nous-stream and the raw floors speak the openai format only\n";
        return 2;
    }

    nous::bench::MockChild mock;
    if (load.url_base.empty()) {
        // The mock in a child, before any thread: its CPU is not ours.
        nous::http::MockServerOptions options;
        options.stream_tokens = mock_tokens;
        options.tokens_per_second = mock_rate;
        mock = nous::bench::mock_in_child(options);
        load.url_base = mock.url;
    }

    if (vm.count("otlp")) {
        nous::llm::OtlpSettings otlp;
        otlp.traces_endpoint = load.url_base + "/v1/traces";
        otlp.metrics_endpoint = load.url_base + "/v1/metrics";
        auto exporter = nous::llm::OtlpExporter::start(otlp);
        if (!exporter) {
            std::cerr << "chat_load: " << exporter.error().message << "\n";
            return 2;
        }
        load.otlp = exporter.value();
    }

    Tally tally(static_cast<std::size_t>(load.streams) * static_cast<std::size_t>(load.rounds));
    const double cpu_before = nous::bench::process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    run_client(load, tally);
    if (load.otlp) {  // the export's own work is part of the run's CPU
        load.otlp->shutdown();
        const auto stats = load.otlp->stats();
        std::cerr << "chat_load: otlp " << stats.spans_exported << " spans exported, "
                  << stats.spans_dropped << " dropped, " << stats.spans_failed << " failed\n";
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = nous::bench::process_cpu_seconds() - cpu_before;
    mock.stop();
    const std::string client = load.client == "nous-llm" || load.client == "nous-stream"
                                   ? load.client + "-" + load.stream_backend
                                   : load.client;
    const std::uint64_t tokens = tally.tokens.load();
    // Exactly the keys of DESIGN's driver contract.
    std::printf(
        "{\"client\":\"%s\",\"streams\":%d,\"tokens\":%llu,\"errors\":%llu,"
        "\"wall_s\":%.3f,\"cpu_s\":%.3f,\"us_per_token\":%.2f,\"peak_rss_kb\":%ld}\n",
        client.c_str(), load.streams, static_cast<unsigned long long>(tokens),
        static_cast<unsigned long long>(tally.errors.load()), wall, cpu,
        tokens ? cpu * 1e6 / static_cast<double>(tokens) : 0.0, nous::bench::peak_rss_kb());
    // Beside the contract's line, on stderr: each stream's time to its
    // first token, from before it connects.
    auto& ms = tally.first_token_ms;
    ms.resize(std::min(ms.size(), tally.first_tokens.load()));  // the streams that had one
    if (!ms.empty()) {
        std::sort(ms.begin(), ms.end());
        const auto at = [&](double q) {
            return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))];
        };
        std::fprintf(stderr,
                     "chat_load: time to first token p50 %.1f ms, p99 %.1f ms (%zu streams)\n",
                     at(0.50), at(0.99), ms.size());
    }
    return tally.errors.load() ? 1 : 0;
}
