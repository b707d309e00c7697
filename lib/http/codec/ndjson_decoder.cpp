// NDJSON (Ollama-style streams): one JSON value per line.

#include <rapidjson/document.h>

#include <cstring>

#include "codec/decoders.hpp"
#include "core/json_limits.hpp"

namespace nous::http {

namespace {

bool is_blank(std::string_view s) {
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\r') return false;
    return true;
}

class NdjsonDecoder final : public detail::CountingDecoder {
  public:
    explicit NdjsonDecoder(std::size_t max_event_bytes) : max_(max_event_bytes) {}

    std::optional<Error> feed(std::string_view bytes, std::vector<Event>& out, bool&) override {
        std::size_t i = 0;
        while (i < bytes.size()) {
            const char* nl =
                static_cast<const char*>(std::memchr(bytes.data() + i, '\n', bytes.size() - i));
            std::size_t j = nl ? static_cast<std::size_t>(nl - bytes.data()) : bytes.size();
            scanned_ += j - i + (nl ? 1 : 0);
            if (line_.size() + (j - i) > max_)
                return Error(ErrorCode::buffer_overflow, "NDJSON line exceeds the decoder cap of " +
                                                             std::to_string(max_) + " bytes");
            if (!nl) {
                line_.append(bytes.substr(i));
                break;
            }
            std::optional<Error> e;
            if (line_.empty()) {
                e = emit(bytes.substr(i, j - i), out);
            } else {
                line_.append(bytes.substr(i, j - i));
                e = emit(line_, out);
                line_.clear();
            }
            if (e) return e;
            i = j + 1;
        }
        return std::nullopt;
    }

    std::optional<Error> finish(std::vector<Event>& out) override {
        if (is_blank(line_)) return std::nullopt;
        // A last line without its newline: complete JSON is an item, anything else a cut.
        rapidjson::Document doc;
        if (!detail::json_depth_within(line_))
            return detail::malformed_stream("NDJSON line nested deeper than " +
                                            std::to_string(detail::max_json_depth) + " levels");
        doc.Parse(line_.data(), line_.size());
        if (doc.HasParseError())
            return Error(ErrorCode::truncated, "NDJSON stream ended in the middle of a line");
        auto e = emit(line_, out);
        line_.clear();
        return e;
    }

  private:
    std::optional<Error> emit(std::string_view line, std::vector<Event>& out) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (is_blank(line)) return std::nullopt;
        // Server bytes: refuse deep nesting before RapidJSON recurses into it.
        if (!detail::json_depth_within(line))
            return detail::malformed_stream("NDJSON line nested deeper than " +
                                            std::to_string(detail::max_json_depth) + " levels");
        rapidjson::Document doc;
        doc.Parse(line.data(), line.size());
        if (doc.HasParseError())
            return detail::malformed_stream("NDJSON line is not JSON (offset " +
                                            std::to_string(doc.GetErrorOffset()) + ")");
        Event e;
        e.type = "json";
        e.data.assign(line);
        out.push_back(std::move(e));
        return std::nullopt;
    }

    const std::size_t max_;
    std::string line_;
};

}  // namespace

std::unique_ptr<Decoder> make_ndjson_decoder(std::size_t max_event_bytes) {
    return std::make_unique<NdjsonDecoder>(max_event_bytes);
}

}  // namespace nous::http
