#pragma once
// What a stream delivers: decoded events, owned (Event) or viewed (EventView),
// and the shared storage of their last event ID.

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "nous/http/options.hpp"

namespace nous::http {

/// The last event ID at an SSE event's dispatch. Stored once per `id` field
/// and shared by every event that carries it: a long id (up to the line cap)
/// is never copied into each event, so decoded but unread events stay within
/// the stream's memory bound.
class EventId {
  public:
    EventId() = default;
    EventId(std::string_view id)
        : value_(id.empty() ? nullptr : std::make_shared<const std::string>(id)) {}
    EventId(const char* id) : EventId(std::string_view(id)) {}
    EventId(const std::string& id) : EventId(std::string_view(id)) {}

    std::string_view view() const noexcept {
        return value_ ? std::string_view(*value_) : std::string_view();
    }
    operator std::string_view() const noexcept { return view(); }
    std::string str() const { return std::string(view()); }
    const char* data() const noexcept { return view().data(); }
    std::size_t size() const noexcept { return view().size(); }
    bool empty() const noexcept { return view().empty(); }

    /// One comparison serves them all: another EventId, a std::string or a
    /// literal converts to std::string_view (C++20 also rewrites `"x" == id`).
    friend bool operator==(const EventId& a, std::string_view b) noexcept { return a.view() == b; }
    friend std::ostream& operator<<(std::ostream& os, const EventId& id) { return os << id.view(); }

  private:
    std::shared_ptr<const std::string> value_;
};

/// One decoded item of a stream: an SSE event, an NDJSON line, a JSON-array
/// element, or a raw piece of body.
struct Event {
    /// SSE event name ("message" unless the server named it); "json" for
    /// NDJSON and JSON-array items; "raw" for the raw format.
    std::string type = "message";
    std::string data;
    /// The last event ID at dispatch (it persists across SSE events; shared, not copied).
    EventId id;
    /// An SSE `retry:` field, when the server sent one.
    std::optional<Milliseconds> retry;
};

/// A decoded event without a copy: views into the received bytes or the
/// decoder's storage, valid until the next call to Stream::next_view() or
/// Stream::next() on the same stream. Nothing is allocated per event.
struct EventView {
    std::string_view type = "message";
    std::string_view data;
    /// The last event ID at dispatch (shared storage; null when the decoder has none).
    const EventId* id = nullptr;
    std::optional<Milliseconds> retry;

    std::string_view id_view() const noexcept { return id ? id->view() : std::string_view(); }
    /// An owned copy (what Stream::next() delivers); the id stays shared.
    Event to_event() const {
        Event e;
        e.type.assign(type);
        e.data.assign(data);
        if (id) e.id = *id;
        e.retry = retry;
        return e;
    }
};

}  // namespace nous::http
