#pragma once
// The request bodies the mock received, written to a folder one file each
// (nous_mock internal; MockServerOptions::record_dir): what `make sdk-test`
// type-checks against the providers' own request types.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "nous/mock/mock_server.hpp"
#include "provider_formats.hpp"

namespace nous::http::mock {

class RequestRecorder {
  public:
    explicit RequestRecorder(std::string dir) : dir_(std::move(dir)) {}
    bool enabled() const noexcept { return !dir_.empty(); }
    /// A chat request of `format` (Anthropic's named with its anthropic-version).
    void chat(Format format, const MockRequest& request);
    void embeddings(Format format, const MockRequest& request);
    /// A token-count request (Anthropic's named with its anthropic-version).
    void count(Format format, const MockRequest& request);

  private:
    void write(std::string_view kind, const std::string& body);
    std::string dir_;
    std::atomic<std::uint64_t> count_{0};
};

}  // namespace nous::http::mock
