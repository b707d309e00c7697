// The AWS event stream (application/vnd.amazon.eventstream), the binary
// framing Bedrock's converse-stream and the other AWS streaming APIs use:
// each message is
//   total length (u32 BE) | headers length (u32 BE) | CRC32 of those 8 bytes
//   | headers | payload | CRC32 of everything before it
// and each header is
//   name length (u8) | name | type (u8) | value
// with values typed 0 true, 1 false, 2 byte, 3 short, 4 int, 5 long,
// 6 bytes (u16 length), 7 string (u16 length), 8 timestamp (i64 ms), 9 uuid.
// A message becomes one event: `:message-type` event -> type = its
// `:event-type`; exception -> "exception:" + its `:exception-type`; error ->
// "error:" + its `:error-code` (data: its `:error-message`). The payload is
// the data. A CRC that does not match, a header of an unknown type, a
// length that does not fit, a header name given twice, a message over the
// format's 16 MiB or a body that ends inside a message is malformed_stream,
// never a guess; a message over the stream's max_event_bytes is
// buffer_overflow, as for every decoder.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <list>

#include "codec/decoders.hpp"

namespace nous::http {

namespace {

constexpr std::size_t kPrelude = 12;  // two lengths and the prelude's CRC
constexpr std::size_t kMinimum = 16;  // a prelude and the message CRC
constexpr std::uint32_t kMaxMessage = 16u << 20;

/// CRC-32 (IEEE 802.3, reflected, as zlib's), eight bytes a step through
/// eight tables ("slicing-by-8"): a token's message is checked twice, and a
/// byte at a time cost Bedrock's tokens more than OpenAI's.
std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0) noexcept {
    static const auto tables = [] {
        std::array<std::array<std::uint32_t, 256>, 8> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[0][i] = c;
        }
        for (std::size_t n = 1; n < 8; ++n)
            for (std::uint32_t i = 0; i < 256; ++i)
                t[n][i] = (t[n - 1][i] >> 8) ^ t[0][t[n - 1][i] & 0xFF];
        return t;
    }();
    crc = ~crc;
    while (size >= 8) {
        const std::uint32_t low =
            crc ^ (std::uint32_t{data[0]} | std::uint32_t{data[1]} << 8 |
                   std::uint32_t{data[2]} << 16 | std::uint32_t{data[3]} << 24);
        crc = tables[7][low & 0xFF] ^ tables[6][(low >> 8) & 0xFF] ^ tables[5][(low >> 16) & 0xFF] ^
              tables[4][low >> 24] ^ tables[3][data[4]] ^ tables[2][data[5]] ^ tables[1][data[6]] ^
              tables[0][data[7]];
        data += 8;
        size -= 8;
    }
    while (size--) crc = tables[0][(crc ^ *data++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t u32(const unsigned char* p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

std::uint16_t u16(const unsigned char* p) noexcept {
    return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

/// One AWS event-stream decoder, two outputs: owned Events (feed) or views
/// (feed_views, the path a Stream takes: a token's message is read where it
/// lies, with no copy and no allocation).
class AwsEventStreamDecoder final : public detail::CountingDecoder, public detail::ViewDecoder {
  public:
    explicit AwsEventStreamDecoder(std::size_t max_event_bytes) : cap_(max_event_bytes) {}

    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out,
                              bool& done) override {
        views_.clear();
        auto error = feed_views(bytes, views_, done);
        for (const EventView& v : views_) out.push_back(v.to_event());
        return error;
    }

    std::optional<Error> feed_views(std::string_view bytes, std::vector<EventView>& out,
                                    bool&) override {
        scanned_ += bytes.size();
        prefixed_types_.clear();  // the last feed's views are void now
        // Whole messages in `bytes` are read where they lie; only a message
        // cut by the piece is kept, and the views into it live in `read_`
        // until the next feed.
        std::string_view rest = bytes;
        read_.clear();
        if (!held_.empty()) {
            held_.append(bytes);
            read_.swap(held_);
            rest = read_;
        }
        std::size_t used = 0;
        std::optional<Error> error;
        while (rest.size() - used >= kPrelude) {
            const auto* p = reinterpret_cast<const unsigned char*>(rest.data() + used);
            const std::uint32_t total = u32(p);
            if ((error = check_prelude(p, total))) break;
            if (rest.size() - used < total) break;
            if ((error = read_message(p, total, out))) break;
            used += total;
        }
        if (!error) held_.assign(rest.substr(used));
        return error;
    }

    std::optional<Error> finish(std::vector<Event>&) override {
        if (held_.empty()) return std::nullopt;
        return detail::malformed_stream("the body ended inside an event-stream message (" +
                                        std::to_string(held_.size()) + " bytes of it)");
    }

  private:
    std::optional<Error> check_prelude(const unsigned char* p, std::uint32_t total) const {
        const std::uint32_t headers = u32(p + 4);
        if (total < kMinimum || headers > total - kMinimum)
            return detail::malformed_stream("an event-stream message of " + std::to_string(total) +
                                            " bytes with " + std::to_string(headers) +
                                            " bytes of headers");
        if (crc32(p, 8) != u32(p + 8))
            return detail::malformed_stream("an event-stream prelude whose CRC does not match");
        if (total > kMaxMessage)
            return detail::malformed_stream("an event-stream message of " + std::to_string(total) +
                                            " bytes (the format's limit is 16 MiB)");
        if (total > cap_)
            return Error(ErrorCode::buffer_overflow,
                         "an event-stream message of " + std::to_string(total) +
                             " bytes exceeds the decoder cap of " + std::to_string(cap_));
        return std::nullopt;
    }

    std::optional<Error> read_message(const unsigned char* p, std::uint32_t total,
                                      std::vector<EventView>& out) {
        if (crc32(p, total - 4) != u32(p + total - 4))
            return detail::malformed_stream("an event-stream message whose CRC does not match");
        const std::uint32_t headers_length = u32(p + 4);
        const unsigned char* h = p + kPrelude;
        const unsigned char* end = h + headers_length;
        std::string_view message_type, event_type, exception_type, error_code, error_message;
        // A name given twice: which value would be meant? The names seen,
        // on the stack for the usual few (a message has three or four).
        std::array<std::string_view, 8> few;
        std::vector<std::string_view> more;
        std::size_t seen = 0;
        while (h < end) {
            const std::size_t name_length = *h++;
            if (static_cast<std::size_t>(end - h) < name_length + 1)
                return detail::malformed_stream("an event-stream header cut short");
            const std::string_view name(reinterpret_cast<const char*>(h), name_length);
            h += name_length;
            const auto first_few = few.begin() + std::min(seen, few.size());
            if (std::find(few.begin(), first_few, name) != first_few ||
                std::find(more.begin(), more.end(), name) != more.end())
                return detail::malformed_stream("an event-stream header '" + std::string(name) +
                                                "' given twice");
            if (seen < few.size())
                few[seen] = name;
            else
                more.push_back(name);
            ++seen;
            const unsigned type = *h++;
            std::size_t value_length = 0;
            switch (type) {
                case 0:
                case 1:
                    value_length = 0;
                    break;
                case 2:
                    value_length = 1;
                    break;
                case 3:
                    value_length = 2;
                    break;
                case 4:
                    value_length = 4;
                    break;
                case 5:
                case 8:
                    value_length = 8;
                    break;
                case 9:
                    value_length = 16;
                    break;
                case 6:
                case 7:
                    if (end - h < 2)
                        return detail::malformed_stream("an event-stream header cut short");
                    value_length = u16(h);
                    h += 2;
                    break;
                default:
                    return detail::malformed_stream("an event-stream header of unknown type " +
                                                    std::to_string(type));
            }
            if (static_cast<std::size_t>(end - h) < value_length)
                return detail::malformed_stream("an event-stream header cut short");
            if (type == 7) {
                const std::string_view value(reinterpret_cast<const char*>(h), value_length);
                if (name == ":message-type")
                    message_type = value;
                else if (name == ":event-type")
                    event_type = value;
                else if (name == ":exception-type")
                    exception_type = value;
                else if (name == ":error-code")
                    error_code = value;
                else if (name == ":error-message")
                    error_message = value;
            }
            h += value_length;
        }
        const std::string_view payload(reinterpret_cast<const char*>(end),
                                       total - kMinimum - headers_length);
        EventView event;
        if (message_type == "event" || message_type.empty()) {
            event.type = event_type.empty() ? std::string_view("message") : event_type;
            event.data = payload;
        } else if (message_type == "exception") {
            event.type = prefixed_types_.emplace_back("exception:" + std::string(exception_type));
            event.data = payload;
        } else if (message_type == "error") {
            event.type = prefixed_types_.emplace_back("error:" + std::string(error_code));
            event.data = error_message;
        } else {
            return detail::malformed_stream("an event-stream message of type '" +
                                            std::string(message_type) + "'");
        }
        out.push_back(event);
        return std::nullopt;
    }

    const std::size_t cap_;
    std::string held_;  ///< a message cut by the last piece
    std::string read_;  ///< the held bytes the last feed read: its views point here
    /// "exception:..." types of the last feed's views. A list: a deque
    /// allocates a 512-byte block and its map even empty.
    std::list<std::string> prefixed_types_;
    std::vector<EventView> views_;  ///< feed()'s, before they are copied out
};

}  // namespace

std::string encode_aws_event_stream_message(
    const std::vector<std::pair<std::string, std::string>>& string_headers,
    std::string_view payload) {
    std::string headers;
    for (const auto& [name, value] : string_headers) {
        headers += static_cast<char>(name.size());
        headers += name;
        headers += '\x07';
        headers += static_cast<char>((value.size() >> 8) & 0xFF);
        headers += static_cast<char>(value.size() & 0xFF);
        headers += value;
    }
    std::string m;
    auto put = [&m](std::uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8) m += static_cast<char>((v >> shift) & 0xFF);
    };
    put(static_cast<std::uint32_t>(kMinimum + headers.size() + payload.size()));
    put(static_cast<std::uint32_t>(headers.size()));
    put(crc32(reinterpret_cast<const unsigned char*>(m.data()), 8));
    m += headers;
    m += payload;
    put(crc32(reinterpret_cast<const unsigned char*>(m.data()), m.size()));
    return m;
}

std::unique_ptr<Decoder> make_aws_event_stream_decoder(std::size_t max_event_bytes) {
    return std::make_unique<AwsEventStreamDecoder>(max_event_bytes);
}

}  // namespace nous::http
