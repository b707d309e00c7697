// stream(): backend resolution (per call > NOUS_HTTP_STREAM_BACKEND > app
// config > "window"), the built-in window and pull backends with the
// concurrency cap, and an application's own backend adapted into the same pipeline.

#include "stream/stream_backends.hpp"

#include "core/backend_chain.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "core/registry.hpp"
#include "transport/sigpipe.hpp"

namespace nous::http {

namespace detail {

Stream PreparedStreamBackend::open(const Request& request, const Options& options) {
    const auto env = read_env();
    const auto config = config_snapshot(env);
    return open_with(request, options, env, *config);
}

}  // namespace detail

// ---- backends and resolution -----------------------------------------------

namespace {

/// The built-in backends: a window (reader thread) or pull (caller's thread) source.
class BuiltinStreamBackend final : public detail::PreparedStreamBackend {
  public:
    explicit BuiltinStreamBackend(bool window) : window_(window) {}
    Stream open_with(const Request& request, const Options& options, const detail::EnvSnapshot& env,
                     const Config& config) override {
        auto call = detail::make_stream_call(request.url, request.body, *request.headers, options,
                                             env, config);
        if (!call) return Stream::failed(call.error());
        const detail::Settings& settings = call.value()->prepared.settings;
        const std::size_t cap = settings.max_concurrent_streams;
        detail::StreamSlot slot;
        if (!slot.acquire(cap)) {
            detail::log(LogLevel::warning,
                        "stream refused: " + std::to_string(cap) +
                            " concurrent streams are open (raise Config::max_concurrent_streams)");
            return Stream::failed(
                Error(ErrorCode::saturated,
                      "concurrent streams cap of " + std::to_string(cap) + " reached"));
        }
        auto decoder = detail::decoder_for(options, settings.max_event_bytes);
        std::unique_ptr<ChunkSource> source;
        try {
            source = window_ ? detail::make_window_source(std::move(call.value()), std::move(slot))
                             : detail::make_pull_source(std::move(call.value()), std::move(slot));
        } catch (const std::system_error& e) {
            // No reader thread to be had (EAGAIN under a pids or memory limit):
            // typed, and the stream slot is already given back.
            detail::log(LogLevel::warning,
                        std::string("stream refused: cannot start its reader thread: ") + e.what());
            return Stream::failed(
                Error(ErrorCode::saturated,
                      std::string("cannot start a stream reader thread: ") + e.what()));
        }
        return Stream(std::move(source), std::move(decoder));
    }

  private:
    bool window_;
};

/// An application's StreamBackend in the same pipeline: it sees only calls
/// that pass the checks post() applies, and an exception is a typed error.
class CustomStreamBackend final : public detail::PreparedStreamBackend {
  public:
    explicit CustomStreamBackend(std::shared_ptr<StreamBackend> backend)
        : backend_(std::move(backend)) {}
    Stream open_with(const Request& request, const Options& options, const detail::EnvSnapshot&,
                     const Config&) override {
        if (auto valid = detail::validate_call(request.url, request.body, *request.headers); !valid)
            return Stream::failed(valid.error());
        // Code we do not know may write without MSG_NOSIGNAL while it opens
        // (docs/design/poco-traps.md#sigpipe).
        detail::SigpipeGuard guard;
        try {
            return backend_->open(request, options);
        } catch (const std::exception& e) {
            return Stream::failed(Error(ErrorCode::backend_unavailable,
                                        std::string("stream backend threw: ") + e.what()));
        } catch (...) {
            return Stream::failed(Error(ErrorCode::backend_unavailable, "stream backend threw"));
        }
    }

  private:
    std::shared_ptr<StreamBackend> backend_;
};

detail::NamedRegistry<detail::PreparedStreamBackend>& stream_registry() {
    static auto* r = [] {
        auto* made = new detail::NamedRegistry<detail::PreparedStreamBackend>;  // never destroyed:
                                                                                // used until exit
        made->add_instance("window", std::make_shared<BuiltinStreamBackend>(true));
        made->add_instance("pull", std::make_shared<BuiltinStreamBackend>(false));
        return made;
    }();
    return *r;
}

bool stream_available(const std::string& name) { return stream_registry().contains(name); }

bool stream_known_not_built(const std::string&) { return false; }

detail::ChainSpec stream_chain(const detail::EnvSnapshot& env, const Config& config) {
    return detail::ChainSpec{
        "stream backend",      "NOUS_HTTP_STREAM_BACKEND", env.http_stream_backend, "window",
        config.stream_backend, stream_available,           stream_known_not_built};
}

Result<std::shared_ptr<detail::PreparedStreamBackend>> stream_backend_for(
    const Options& options, const detail::EnvSnapshot& env, const Config& config) {
    auto name = detail::resolve_chain(stream_chain(env, config), options.stream_backend);
    if (!name) return name.error();
    return stream_registry().get(name.value(), "stream backend");
}

}  // namespace

void register_stream_backend(const std::string& name, StreamBackendFactory factory) {
    stream_registry().add(
        name, [factory = std::move(factory)]() -> std::shared_ptr<detail::PreparedStreamBackend> {
            auto made = factory ? factory() : nullptr;
            return made ? std::make_shared<CustomStreamBackend>(std::move(made)) : nullptr;
        });
}

std::vector<std::string> stream_backend_names() { return stream_registry().names(); }

Result<std::string> resolve_stream_backend_name(const Options& options) {
    const auto env = detail::read_env();
    return detail::resolve_chain(stream_chain(env, *detail::config_snapshot(env)),
                                 options.stream_backend);
}

Stream stream(std::string_view url, std::string_view body, const Headers& headers,
              const Options& options) {
    const auto start = detail::Clock::now();  // first_event_timeout counts from here
    const auto env = detail::read_env();
    const auto config = detail::config_snapshot(env);
    auto backend = stream_backend_for(options, env, *config);
    if (!backend) return Stream::failed(backend.error());
    const Request request{url, body, &headers};
    // One pipeline for every backend; Options::cancel and the content
    // deadlines end the stream whichever backend made it (a stream also has
    // its own Stream::cancel()).
    return detail::watch_call(backend.value()->open_with(request, options, env, *config), options,
                              *config, start);
}

}  // namespace nous::http
