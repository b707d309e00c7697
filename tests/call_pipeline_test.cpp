// The call pipeline over the transport seam: post() runs unchanged over an
// in-memory transport that fragments, stalls and fails on call N.

#include <catch2/catch.hpp>

#include "memory_transport.hpp"
#include "nous/http/client.hpp"
#include "nous/http/stream.hpp"
#include "transport/exchange.hpp"
#include "transport/pool.hpp"

using namespace nous::http;
using namespace nous::test;
using namespace std::chrono_literals;

namespace {

const std::string kUrl = "http://memory.test/v1/x";

std::string chunked_ok(const std::string& body) {
    std::string out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (std::size_t i = 0; i < body.size(); i += 7) {
        std::string piece = body.substr(i, 7);
        char size[16];
        std::snprintf(size, sizeof size, "%zx", piece.size());
        out += std::string(size) + "\r\n" + piece + "\r\n";
    }
    return out + "0\r\n\r\n";
}

/// Every pool created while this lives talks to `origin` in memory.
struct MemoryPools {
    explicit MemoryPools(std::shared_ptr<MemoryOrigin> origin) {
        detail::reset_pools_for_tests();
        detail::set_connector_factory_for_tests([origin](const detail::ConnectionKey&) {
            return std::make_unique<MemoryConnector>(origin);
        });
    }
    ~MemoryPools() {
        detail::set_connector_factory_for_tests(nullptr);
        detail::reset_pools_for_tests();
    }
    /// The pool post() uses for kUrl with default options.
    static std::shared_ptr<detail::OriginPool> pool() {
        auto url = detail::parse_url(kUrl);
        return detail::pool_for(url.value(), "", Options{}, detail::PoolSettings{});
    }
};

Options quick() {
    Options o;
    o.max_retries = 0;
    o.connect_timeout = 50ms;
    o.read_timeout = 50ms;
    return o;
}

}  // namespace

TEST_CASE("the exchange reads a chunked response fed one byte per read over the seam") {
    auto origin = std::make_shared<MemoryOrigin>();
    const std::string body =
        R"({"id":"chatcmpl-1","choices":[{"message":{"content":"hello there"}}]})";
    origin->response = chunked_ok(body);
    origin->max_read = 1;
    MemoryTransport transport(origin);
    detail::ExchangeParams params;
    char buffer[64];
    detail::ResponseReader reader(transport, params, buffer, sizeof buffer);
    auto url = detail::parse_url(kUrl);
    REQUIRE_FALSE(reader.send(url.value(), "{}", {}));
    REQUIRE_FALSE(reader.read_head());
    CHECK(reader.head().status == 200);
    std::string out;
    REQUIRE_FALSE(reader.read_whole_body(out, 1 << 20));
    CHECK(out == body);
    CHECK(reader.reusable());
    CHECK(origin->written.rfind("POST /v1/x HTTP/1.1\r\nHost: memory.test\r\n", 0) == 0);
}

TEST_CASE("post() runs over the in-memory transport, and keep-alive reuses it") {
    auto origin = std::make_shared<MemoryOrigin>();
    origin->response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    origin->max_read = 3;
    MemoryPools pools(origin);
    for (int i = 0; i < 3; ++i) {
        auto r = post(kUrl, "{}", {}, quick());
        REQUIRE(r.ok());
        CHECK(r->body == "hello");
        CHECK(r->connection_reused == (i > 0));
    }
    CHECK(origin->connects == 1);
}

TEST_CASE(
    "fail-at-N over the seam: every step's failure is a typed error, no slot leaks, the next call "
    "works") {
    for (Fault fault : {Fault::error, Fault::short_write, Fault::eof, Fault::reset, Fault::stall}) {
        for (std::size_t fragment : {std::size_t(1), std::size_t(1 << 20)}) {
            auto origin = std::make_shared<MemoryOrigin>();
            origin->response = chunked_ok(std::string(40, 'x'));
            origin->max_read = fragment;
            MemoryPools pools(origin);
            auto pool = MemoryPools::pool();
            bool succeeded = false;
            for (std::uint64_t n = 1; !succeeded && n < 200; ++n) {
                CAPTURE(static_cast<int>(fault), fragment, n);
                origin->fault = fault;
                origin->fail_at = origin->steps + n;  // the n-th step of this call
                auto r = post(kUrl, "{}", {}, quick());
                if (r.ok()) {
                    CHECK(r->body == std::string(40, 'x'));
                    succeeded = origin->steps < origin->fail_at;  // the fault was never reached
                } else {
                    const auto code = r.error().code;
                    CAPTURE(r.error().message);
                    CHECK((code == ErrorCode::connect_failed ||
                           code == ErrorCode::connection_closed || code == ErrorCode::truncated ||
                           code == ErrorCode::timeout_read || code == ErrorCode::timeout_connect));
                }
                // No leased slot left behind: only idle connections remain open.
                origin->fault = Fault::none;
                origin->fail_at = 0;
                CHECK(pool->open_count() <= 1);
                auto next = post(kUrl, "{}", {}, quick());
                REQUIRE(next.ok());
                CHECK(next->body == std::string(40, 'x'));
            }
            CHECK(succeeded);
        }
    }
}

TEST_CASE(
    "fail-at-N over the seam for streams: window and pull end in done or one typed error, and leak "
    "nothing") {
    const std::string backend = GENERATE("window", "pull");
    for (Fault fault : {Fault::error, Fault::short_write, Fault::eof, Fault::reset, Fault::stall}) {
        auto origin = std::make_shared<MemoryOrigin>();
        const std::string events = "data: one\n\ndata: two\n\ndata: [DONE]\n\n";
        origin->response = chunked_ok(events);
        origin->max_read = 5;
        MemoryPools pools(origin);
        auto pool = MemoryPools::pool();
        Options o = quick();
        o.stream_backend = backend;
        bool succeeded = false;
        for (std::uint64_t n = 1; !succeeded && n < 200; ++n) {
            CAPTURE(backend, static_cast<int>(fault), n);
            origin->fault = fault;
            origin->fail_at = origin->steps + n;
            std::vector<StreamItem> items;
            {
                Stream s = stream(kUrl, "{}", {}, o);
                while (auto item = s.next()) items.push_back(std::move(*item));
            }
            REQUIRE_FALSE(items.empty());
            const StreamItem& last = items.back();
            if (last.is_done()) {
                REQUIRE(items.size() == 3);
                CHECK(items[0].event.data == "one");
                succeeded = origin->steps < origin->fail_at;
            } else {
                REQUIRE(last.is_error());
                CAPTURE(last.error->message);
                const auto code = last.error->code;
                CHECK((code == ErrorCode::connect_failed || code == ErrorCode::connection_closed ||
                       code == ErrorCode::truncated || code == ErrorCode::timeout_read ||
                       code == ErrorCode::timeout_connect));
                for (std::size_t i = 0; i + 1 < items.size(); ++i) CHECK(items[i].is_event());
            }
            CHECK(live_streams() == 0);
            origin->fault = Fault::none;
            origin->fail_at = 0;
            CHECK(pool->open_count() <= 1);
            Stream next = stream(kUrl, "{}", {}, o);
            std::vector<StreamItem> ok;
            while (auto item = next.next()) ok.push_back(std::move(*item));
            REQUIRE(ok.size() == 3);
            CHECK(ok.back().is_done());
        }
        CHECK(succeeded);
    }
}
