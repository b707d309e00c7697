// The stack a streamed chat takes on the caller's thread. A server holding
// thousands of streams holds a thread each, and each thread keeps every
// stack page it ever touched: the deepest point of a call is memory paid for
// the stream's whole life (docs/llm.md, "Stack"). Measured, not timed: the
// call runs on a thread whose stack is painted first, and the deepest byte
// that changed is how far it went. And a reader thread gives back the pages
// its connect took (reader_thread.hpp). Normal builds only: sanitizers make
// every frame larger, and keep their stacks.

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>

#include "nous/llm/chat.hpp"
#include "nous/mock/mock_server.hpp"
#include "stream/reader_thread.hpp"

namespace {

constexpr std::size_t kStackBytes = 1 << 20;
constexpr unsigned char kPaint = 0xA5;

struct ChatOnThread {
    std::string base_url;
    std::string backend;
    bool ok = false;
    int text_deltas = 0;
    std::uintptr_t entry = 0;  ///< the thread body's own frame, where the call starts
};

void* run_chat_thread(void* arg) {
    auto& run = *static_cast<ChatOnThread*>(arg);
    volatile char marker = 0;
    run.entry = reinterpret_cast<std::uintptr_t>(&marker);
    nous::llm::ChatRequest request;
    request.provider = nous::llm::Provider::openai;
    request.base_url = run.base_url + "/v1";
    request.model = "mock-1";
    request.messages.push_back(nous::llm::ChatMessage::user("Tell me a story."));
    nous::http::Options options;
    options.stream_backend = run.backend;
    options.max_retries = 0;
    auto result = nous::llm::run_chat(request, options, [&](const nous::llm::Delta& d) {
        run.text_deltas += !d.text.empty();
        return true;
    });
    run.ok = static_cast<bool>(result);
    return nullptr;
}

/// Bytes of stack a streamed run_chat took below the thread's own frame.
std::size_t stack_of_chat(const std::string& base_url, const std::string& backend) {
    void* stack =
        ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(stack != MAP_FAILED);
    auto* bytes = static_cast<unsigned char*>(stack);
    std::memset(bytes, kPaint, kStackBytes);
    ChatOnThread run{base_url, backend};
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstack(&attributes, stack, kStackBytes);
    pthread_t thread;
    const int failed = pthread_create(&thread, &attributes, run_chat_thread, &run);
    pthread_attr_destroy(&attributes);
    REQUIRE(failed == 0);
    pthread_join(thread, nullptr);
    std::size_t untouched = 0;
    while (untouched < kStackBytes && bytes[untouched] == kPaint) ++untouched;
    const auto deepest = reinterpret_cast<std::uintptr_t>(bytes + untouched);
    ::munmap(stack, kStackBytes);
    CHECK(run.ok);
    CHECK(run.text_deltas == 5);
    REQUIRE(run.entry > deepest);
    return run.entry - deepest;
}

}  // namespace

TEST_CASE("a streamed chat's frames stay small on the caller's stack") {
    nous::http::MockServerOptions mock;
    mock.stream_tokens = 5;
    nous::http::MockServer warm_up(mock), measured(mock);
    warm_up.start();
    measured.start();
    // Pull connects and reads on the caller's thread; the window's reader
    // connects, and the caller only sets the stream up and reads.
    const auto [backend, limit] = GENERATE(table<std::string, std::size_t>({
        {"pull", 9 * 1024},
        {"window", 6 * 1024},
    }));
    // Once first: what runs once a process (symbol binding, the config's
    // first read, the read watch's start) is not what each stream pays.
    // Then another origin, so that the measured call connects (a pooled
    // connection would leave the connect's frames out).
    (void)stack_of_chat(warm_up.base_url(), backend);
    const std::size_t used = stack_of_chat(measured.base_url(), backend);
    INFO(backend << ": " << used << " bytes below the thread's frame");
    // 8.3 KiB (pull) and 4.9 KiB (window) here; 14.3 and 10.9 KiB while
    // run_chat held its options' copies, its result and the token loop in
    // the frame under the connect, the connect held the TLS handshake's
    // frame, and a stream's setup held a second copy of its prepared call.
    CHECK(used <= limit);
}

namespace {

/// Whether the page holding `address` is in memory.
bool resident(std::uintptr_t address) {
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    unsigned char in_core = 0;
    REQUIRE(::mincore(reinterpret_cast<void*>(address & ~(page - 1)), page, &in_core) == 0);
    return (in_core & 1) != 0;
}

/// Touches 24 KiB of stack below the caller's frame, as a connect does;
/// the lowest address it wrote.
[[gnu::noinline]] std::uintptr_t touch_deep_stack() {
    volatile char deep[24 * 1024];
    for (std::size_t i = 0; i < sizeof deep; i += 256) deep[i] = 1;
    return reinterpret_cast<std::uintptr_t>(&deep[0]);
}

struct StackPages {
    bool deep_before = false, deep_after = false, own_frame_after = false;
};

StackPages release_after_deep_call() {
    StackPages pages;
    volatile char own = 0;
    const std::uintptr_t deepest = touch_deep_stack();
    pages.deep_before = resident(deepest);
    nous::http::detail::release_reader_stack_below_caller();
    own = 1;
    pages.deep_after = resident(deepest);
    pages.own_frame_after = resident(reinterpret_cast<std::uintptr_t>(&own));
    return pages;
}

}  // namespace

TEST_CASE("a reader gives back the stack pages its connect took, and only a reader does") {
    SECTION("on a reader thread the pages below the caller's frame go") {
        StackPages pages;
        nous::http::detail::ReaderThread reader;
        reader.start([&] { pages = release_after_deep_call(); });
        reader.join();
        CHECK(pages.deep_before);
        CHECK_FALSE(pages.deep_after);
        CHECK(pages.own_frame_after);
    }
    SECTION("on any other thread nothing is released") {
        const StackPages pages = release_after_deep_call();
        CHECK(pages.deep_before);
        CHECK(pages.deep_after);
    }
}
