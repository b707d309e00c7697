#pragma once
// An embeddings response read as its bytes arrive (nous_llm internal): each
// item of the response's list goes into its row as soon as the item is
// whole, so a body is decoded while the rest of it is still on the wire and
// only the unread remainder is held. The same reader serves a body that is
// already whole (fed once). docs/embeddings.md, "Decoding".

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "embeddings/embedding_matrix.hpp"
#include "nous/http/decoder.hpp"

namespace nous::llm::detail {

class EmbeddingFormat;

class EmbeddingBodyReader {
  public:
    /// `max_bytes`: the most unread text held at once (a longer single value is refused).
    EmbeddingBodyReader(const EmbeddingFormat& format, BatchReading& batch, std::size_t max_bytes);

    /// The next bytes of the body (any split). What is wrong with the body
    /// when that is already certain, else nullopt.
    std::optional<std::string> feed(std::string_view bytes);
    /// The body ended: what is wrong with it as a whole, or nullopt.
    std::optional<std::string> finish();
    /// Steps that found the held text too short so far (each one a rescan of it).
    std::size_t attempts_short() const noexcept { return attempts_short_; }

  private:
    enum class State {
        open,
        first_key,
        key,
        member_value,
        after_member,
        list_open,
        item,
        after_item,
        closed
    };
    enum class Step { advanced, need_more, failed };
    /// Takes steps while the held text allows; `at_end`: no more is coming.
    std::optional<std::string> advance(bool at_end);
    Step step(bool at_end, std::optional<std::string>& bad);
    /// A whole value at `at` followed by a byte (so a number cannot go on in the next piece).
    bool whole_value_at(std::size_t at, bool at_end) const;
    /// An item that did not read: wrong for certain when it is whole, else cut by the piece.
    Step item_failed(bool at_end, std::optional<std::string>& bad);

    const EmbeddingFormat& format_;
    BatchReading& batch_;
    const std::size_t max_bytes_;
    std::string held_;       ///< text of earlier pieces not read yet
    std::string_view text_;  ///< what the steps read: held_ and the new piece, or the piece alone
    std::size_t used_ = 0;   ///< of text_
    std::size_t retry_at_ = 0;  ///< unread bytes at which a step that wanted more is tried again
    State state_ = State::open;
    std::string key_;
    std::size_t items_ = 0;
    std::size_t attempts_short_ = 0;
    bool has_list_ = false;
};

/// `reader` as a stream decoder (nous/http/decoder.hpp): it reads every
/// piece of the body and hands out no event; what is wrong with the body
/// ends the stream as `protocol`. `reader` must outlive the stream.
std::unique_ptr<nous::http::Decoder> embedding_decoder(EmbeddingBodyReader& reader);

}  // namespace nous::llm::detail
