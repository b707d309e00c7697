// An embeddings response read as its bytes arrive (body_reader.hpp).
//
// The response is {member, ..., "LIST": [item, ...], member, ...}. The
// reader walks that outer shape itself, one step at a time, and hands each
// whole item to the format (which writes its row) and each other member's
// whole value to the format too. A step that finds the held text ends too
// soon is tried again once at least twice as much text is held, so a value
// split over many pieces is scanned a bounded number of times (linear in
// the body). An item is read at once; only when it fails is it looked at
// again, to tell an item cut by the piece (wait for more) from a wrong one.

#include "embeddings/body_reader.hpp"

#include "embeddings/embedding_format.hpp"

namespace nous::llm::detail {

EmbeddingBodyReader::EmbeddingBodyReader(const EmbeddingFormat& format, BatchReading& batch,
                                         std::size_t max_bytes)
    : format_(format), batch_(batch), max_bytes_(max_bytes) {}

std::optional<std::string> EmbeddingBodyReader::feed(std::string_view bytes) {
    // Steps read the piece where it lies when nothing earlier is left over
    // (most pieces): only an unfinished remainder is copied, into held_.
    if (held_.empty()) {
        text_ = bytes;
    } else {
        held_.append(bytes);
        text_ = held_;
    }
    used_ = 0;
    std::optional<std::string> bad;
    if (text_.size() >= retry_at_) bad = advance(false);
    if (bad) return bad;
    const std::string_view rest = text_.substr(used_);
    if (rest.size() > max_bytes_)
        return "an embeddings response with a value past " + std::to_string(max_bytes_) + " bytes";
    if (text_.data() == held_.data())
        held_.erase(0, used_);
    else
        held_.assign(rest);
    text_ = held_;
    used_ = 0;
    return std::nullopt;
}

std::optional<std::string> EmbeddingBodyReader::finish() {
    text_ = held_;
    used_ = 0;
    if (auto bad = advance(true)) return bad;
    JsonCursor rest(text_.substr(used_));
    if (state_ != State::closed || !rest.at_end()) return "an embeddings response that is not JSON";
    if (!has_list_)
        return std::string("an embeddings response without \"") + format_.list_key() + "\"";
    if (items_ != batch_.count)
        return std::to_string(items_) + " embeddings for " + std::to_string(batch_.count) +
               " inputs";
    return std::nullopt;
}

std::optional<std::string> EmbeddingBodyReader::advance(bool at_end) {
    for (;;) {
        std::optional<std::string> bad;
        switch (step(at_end, bad)) {
            case Step::advanced:
                continue;
            case Step::failed:
                return bad;
            case Step::need_more:
                ++attempts_short_;
                retry_at_ = 2 * (text_.size() - used_) + 1;
                return std::nullopt;
        }
    }
}

bool EmbeddingBodyReader::whole_value_at(std::size_t at, bool at_end) const {
    JsonCursor probe(text_.substr(at));
    if (!probe.skip_value()) return false;
    return at_end || probe.peek() != 0;
}

EmbeddingBodyReader::Step EmbeddingBodyReader::item_failed(bool at_end,
                                                           std::optional<std::string>& bad) {
    // The row the item claimed is free again: the item is read anew with more text.
    if (batch_.claimed) batch_.seen[*batch_.claimed] = false;
    if (at_end || whole_value_at(used_, false)) return Step::failed;
    bad.reset();
    --items_;
    return Step::need_more;
}

EmbeddingBodyReader::Step EmbeddingBodyReader::step(bool at_end, std::optional<std::string>& bad) {
    JsonCursor cursor(text_.substr(used_));
    // A step that cannot finish on the held text: wait for more, or, at the
    // end, leave the verdict to finish() (the body is not whole JSON).
    const Step short_text = at_end ? Step::failed : Step::need_more;
    auto advanced = [&](State next) {
        used_ += cursor.offset();
        state_ = next;
        return Step::advanced;
    };
    switch (state_) {
        case State::open:
            return cursor.eat('{') ? advanced(State::first_key) : short_text;
        case State::first_key:
            if (cursor.eat('}')) return advanced(State::closed);
            if (cursor.peek() == 0) return short_text;
            state_ = State::key;
            return Step::advanced;
        case State::key: {
            std::string_view key;
            bool escaped = false;
            if (!cursor.string(key, escaped) || !cursor.eat(':')) return short_text;
            if (key == format_.list_key()) {
                if (has_list_) {
                    bad = "an embeddings response that is not JSON";  // two lists: which one?
                    return Step::failed;
                }
                has_list_ = true;
                return advanced(State::list_open);
            }
            key_.assign(key);
            return advanced(State::member_value);
        }
        case State::member_value:
            if (!whole_value_at(used_, at_end)) return short_text;
            if (!format_.read_member(key_, cursor, batch_)) {
                bad = "an embeddings response that is not JSON";
                return Step::failed;
            }
            return advanced(State::after_member);
        case State::after_member:
            if (cursor.eat(',')) return advanced(State::key);
            if (cursor.eat('}')) return advanced(State::closed);
            return short_text;
        case State::list_open:
            if (!cursor.eat('[')) return short_text;
            if (cursor.eat(']')) return advanced(State::after_member);
            if (cursor.peek() == 0) return short_text;
            return advanced(State::item);
        case State::item:
            // Read at once, without a look ahead for the item's end: the
            // common case, a whole item, is scanned once.
            batch_.claimed.reset();
            if ((bad = format_.read_item(cursor, batch_, items_++)))
                return item_failed(at_end, bad);
            return advanced(State::after_item);
        case State::after_item:
            if (cursor.eat(',')) return advanced(State::item);
            if (cursor.eat(']')) return advanced(State::after_member);
            return short_text;
        case State::closed:
            return short_text;  // only whitespace may follow: finish() judges it
    }
    return Step::failed;
}

namespace {

class EmbeddingDecoder final : public nous::http::Decoder {
  public:
    explicit EmbeddingDecoder(EmbeddingBodyReader& reader) : reader_(reader) {}
    std::optional<nous::http::Error> feed(std::string_view bytes, std::vector<nous::http::Event>&,
                                          bool&) override {
        return verdict(reader_.feed(bytes));
    }
    std::optional<nous::http::Error> finish(std::vector<nous::http::Event>&) override {
        return verdict(reader_.finish());
    }

  private:
    static std::optional<nous::http::Error> verdict(std::optional<std::string> bad) {
        if (!bad) return std::nullopt;
        return nous::http::Error(nous::http::ErrorCode::protocol, std::move(*bad));
    }
    EmbeddingBodyReader& reader_;
};

}  // namespace

std::unique_ptr<nous::http::Decoder> embedding_decoder(EmbeddingBodyReader& reader) {
    return std::make_unique<EmbeddingDecoder>(reader);
}

}  // namespace nous::llm::detail
